import { z } from 'zod';

const origin = z
  .string()
  .trim()
  .regex(/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/, 'must be an origin like https://app.example.com (scheme, host, optional port)');
const cssValue = z.string().trim().min(1).max(200).regex(/^[^;{}<>]*$/, 'must be a plain CSS value without ; { } < >');

export const updateSettingsInput = z.object({
  name: z.string().trim().min(1).max(100).optional(),
  corsOrigins: z.array(origin).max(50).optional(),
  themeColors: z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9]{0,39}$/, 'must be a colour name like primary'), cssValue).optional(),
  shellVariables: z.record(z.string().regex(/^--[a-z][a-z0-9-]{0,59}$/, 'must be a CSS custom property like --shell-bg'), cssValue).optional(),
});

export type UpdateSettingsInput = z.input<typeof updateSettingsInput>;
