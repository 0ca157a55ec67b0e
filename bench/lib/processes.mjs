// Child processes and temp folders of a bench run, all cleaned up by cleanup(), even on failure.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';

const children = new Set();
const folders = new Set();
const finalizers = [];

/** A fresh temp folder removed at cleanup. */
export function tempFolder(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `trellis-bench-${prefix}-`));
  folders.add(dir);
  return dir;
}

/** Registers an async step to run at cleanup, before the children are stopped (newest first). */
export function atCleanup(step) {
  finalizers.push(step);
}

/**
 * Starts `node <args>` and resolves once its output matches `ready` (a regexp whose first group is
 * returned). The child is stopped at cleanup.
 */
export function startNode(args, { env = {}, ready = /listening on (http:\/\/\S+)/, timeoutMs = 60_000, label = args[0] } = {}) {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => {
    children.delete(child);
    resolve(code ?? signal);
  }));
  const started = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not start within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk) => {
      output += chunk;
      const match = ready.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => (output += chunk));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code}:\n${output}`));
    });
  });
  return started.then((match) => ({
    child,
    match,
    output: () => output,
    stop: () => stopChild(child, exited),
  }));
}

/** Runs `node <args>` to completion; resolves with its exit code and output. */
export function runNode(args, { env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

async function stopChild(child, exited) {
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the registered finalizers, stops every child still running and removes the temp folders. */
export async function cleanup() {
  while (finalizers.length) {
    const step = finalizers.pop();
    await step().catch((error) => console.error(`cleanup: ${error.message}`));
  }
  await Promise.all(
    [...children].map((child) => stopChild(child, new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve))))),
  );
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  folders.clear();
}
