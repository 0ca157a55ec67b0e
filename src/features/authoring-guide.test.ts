import { describe, expect, it } from 'vitest';
import { colorCssVariable, featureAuthoringGuide } from './authoring-guide.js';
import { ALLOWED_FEATURE_MODULES, validateFeatureCode } from './jsx-validation.js';

const THEME = {
  colors: { primary: '#2563eb', primaryForeground: '#ffffff', danger: '#dc2626' },
  shell: { '--shell-bg': 'var(--color-background)', '--shell-radius': '0.5rem' },
};

describe('featureAuthoringGuide', () => {
  it('has an example that validates with no errors and no warnings', () => {
    expect(validateFeatureCode(featureAuthoringGuide(THEME).example)).toEqual({ valid: true, errors: [], warnings: [] });
  });

  it('shows the example using @trellis/ui, useQuery and a theme variable', () => {
    const { example } = featureAuthoringGuide(THEME);
    expect(example).toContain("from '@trellis/ui'");
    expect(example).toContain('useQuery(');
    expect(example).toContain('var(--color-primary)');
  });

  it('returns the configured theme with a CSS variable per colour and each shell variable', () => {
    expect(featureAuthoringGuide(THEME).theme).toEqual({
      colors: THEME.colors,
      shell: THEME.shell,
      cssVariables: ['--color-primary', '--color-primary-foreground', '--color-danger', '--shell-bg', '--shell-radius'],
    });
  });

  it('lists every allowed module with its description and exports', () => {
    const { allowedModules } = featureAuthoringGuide(THEME);
    expect(allowedModules).toEqual(ALLOWED_FEATURE_MODULES);
    expect(allowedModules.find((module) => module.name === '@trellis/runtime')?.exports).toEqual([
      'useQuery',
      'useMutation',
      'graphql',
      'navigate',
      'useCurrentUser',
    ]);
  });

  it.each([
    ['the data API', "useQuery(), useMutation() or graphql() from '@trellis/runtime'"],
    ['the default export', 'export default function Page()'],
    ['blocked network APIs', 'fetch, XMLHttpRequest, WebSocket, EventSource, WebTransport, WebRTC (RTCPeerConnection) and navigator.sendBeacon are blocked'],
    ['the theme variables', 'var(--color-primary)'],
    ['the size limit', '1 MB'],
  ])('states the runtime rule about %s', (_what, text) => {
    expect(featureAuthoringGuide(THEME).runtimeRules.some((rule) => rule.includes(text))).toBe(true);
  });

  it('returns copies, so changing a guide changes neither the theme nor the next guide', () => {
    const guide = featureAuthoringGuide(THEME);
    guide.theme.colors.primary = 'red';
    guide.allowedModules[1]!.exports = [];
    guide.runtimeRules.length = 0;
    const next = featureAuthoringGuide(THEME);
    expect(THEME.colors.primary).toBe('#2563eb');
    expect(next.allowedModules[1]!.exports).toHaveLength(5);
    expect(next.runtimeRules.length).toBeGreaterThan(0);
  });
});

describe('colorCssVariable', () => {
  it.each([
    ['primary', '--color-primary'],
    ['primaryForeground', '--color-primary-foreground'],
    ['mutedForeground', '--color-muted-foreground'],
    ['accent2', '--color-accent2'],
  ])('names the variable of %s %s', (name, variable) => {
    expect(colorCssVariable(name)).toBe(variable);
  });
});
