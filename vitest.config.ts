import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: two workers keep SQLite and PostgreSQL suites running side by side.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
