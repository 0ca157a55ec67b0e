import { sha256Hex } from '../platform/crypto.js';
import { badInput } from '../platform/errors.js';

/** Compiled scripts kept, by the sha256 of their source. */
const CACHE_SIZE = 200;
const compiled = new Map<string, string>();

/**
 * Compiles feature code (an ES module with JSX) to a CommonJS script for the application page's
 * frame, which offers `require` for the allowed modules and reads `module.exports.default`.
 * Transforming is not executing: the code never runs on the server. Cached by the code's sha256.
 */
export async function compileFeature(code: string): Promise<{ script: string; codeSha256: string }> {
  const codeSha256 = sha256Hex(code);
  const cached = compiled.get(codeSha256);
  if (cached !== undefined) {
    // Most recently used last: the first key is the one to drop.
    compiled.delete(codeSha256);
    compiled.set(codeSha256, cached);
    return { script: cached, codeSha256 };
  }
  // Loaded on demand: only the application page and the preview need the compiler.
  const { transform } = await import('esbuild');
  let script: string;
  try {
    const result = await transform(code, {
      loader: 'jsx',
      jsx: 'automatic',
      format: 'cjs',
      target: 'es2022',
      sourcefile: 'feature.jsx',
      logLevel: 'silent',
    });
    script = result.code;
  } catch (error) {
    const first = (error as { errors?: { text: string; location?: { line: number; column: number } | null }[] }).errors?.[0];
    const where = first?.location ? ` (line ${first.location.line}, column ${first.location.column + 1})` : '';
    throw badInput(`The feature's code does not compile: ${first?.text ?? 'syntax error'}${where}`);
  }
  if (compiled.size >= CACHE_SIZE) compiled.delete(compiled.keys().next().value!);
  compiled.set(codeSha256, script);
  return { script, codeSha256 };
}
