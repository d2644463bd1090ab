import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Workspace packages resolve to their TypeScript sources (the `tessera-source` export
  // condition), so tests never run a stale build.
  resolve: { conditions: ['tessera-source'] },
  ssr: { resolve: { conditions: ['tessera-source'] } },
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    // Builds src/ once for the CLI and `tessera serve` processes the tests spawn.
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: two workers keep SQLite and PostgreSQL suites running side by side.
    maxWorkers: 2,
    // Files share their worker's module graph instead of importing src/ afresh: about a
    // third of the in-process suites' CPU time. Tests keep their state in their own files
    // (databases, apps, browsers are per file), never in a module another file reads.
    isolate: false,
    reporters: ['default'],
  },
});
