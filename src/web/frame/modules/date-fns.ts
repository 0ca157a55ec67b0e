// date-fns for features, loaded into the frame only when a feature imports it.
import * as dateFns from 'date-fns';
import { registerModule } from './register.js';

registerModule('date-fns', dateFns);
