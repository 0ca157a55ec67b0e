import { describe, expect, it } from 'vitest';
import { hashPassword, passwordHashing, verifyPassword } from './crypto.js';

describe('password hashing', () => {
  it('runs at most two hashes at once and the others in turn, each with its right answer', async () => {
    const stored = await hashPassword('right password');
    expect(passwordHashing()).toEqual({ running: 0, waiting: 0 });
    const checks = ['right password', 'wrong', 'right password', 'wrong', 'right password'].map((password) => verifyPassword(password, stored));
    // Each check reaches the limit at once (it awaits nothing before it).
    expect(passwordHashing()).toEqual({ running: 2, waiting: 3 });
    expect(await Promise.all(checks)).toEqual([true, false, true, false, true]);
    expect(passwordHashing()).toEqual({ running: 0, waiting: 0 });
  });

  it('gives its slot back when a stored hash has impossible parameters', async () => {
    await expect(verifyPassword('x', 'scrypt$3$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).rejects.toThrow();
    expect(passwordHashing()).toEqual({ running: 0, waiting: 0 });
  });
});
