// lodash-es for features, loaded into the frame only when a feature imports it.
import * as lodash from 'lodash-es';
import { registerModule } from './register.js';

registerModule('lodash-es', lodash);
