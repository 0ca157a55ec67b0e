import { Authenticator } from './access/authenticate.js';
import { AccessService } from './access/service.js';
import type { PlatformContext } from './platform/context.js';

/** Every domain service of the deployment, built once at start and shared by all adapters. */
export interface Services {
  readonly ctx: PlatformContext;
  readonly access: AccessService;
  readonly auth: Authenticator;
}

export function createServices(ctx: PlatformContext): Services {
  const access = new AccessService(ctx);
  return {
    ctx,
    access,
    auth: new Authenticator(ctx, access),
  };
}
