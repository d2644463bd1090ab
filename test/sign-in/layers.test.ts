import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module a file imports, as written: relative ones resolved to paths under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+'([^']+)'/gm)].map(
    ([, specifier]) =>
      specifier!.startsWith('.')
        ? relative(SRC, resolve(file, '..', specifier!)).replace(/\\/g, '/')
        : specifier!,
  );
}

/** Files under src/ that call `name` (`x.name(`, `await name(`, ...), not those defining it. */
function callers(name: string): string[] {
  const call = new RegExp(`[^\\w\\s][ \\t]*${name}\\(|\\b(?:await|return)[ \\t]+${name}\\(`);
  return sourceFiles(SRC)
    .filter((file) => call.test(readFileSync(file, 'utf8')))
    .map((file) => relative(SRC, file).replace(/\\/g, '/'))
    .sort();
}

/** Issue 13 item 1 and the style rules: which way the arrows point. */
describe('layers', () => {
  const domain = sourceFiles(join(SRC, 'domain'));

  it('the domain imports no storage, HTTP, CLI or adapter module, and no package but node:', () => {
    const offending = domain.flatMap((file) =>
      importsOf(file)
        .filter((target) => !/^(node:|domain\/|lib\/)/.test(target))
        .map((target) => `${relative(SRC, file)} -> ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it('login flows name no sign-in method: they import none of the methods', () => {
    const flows = domain.filter((file) => file.includes('/login-flows/'));
    expect(flows.length).toBeGreaterThan(0);
    const offending = flows.flatMap((file) =>
      importsOf(file)
        .filter((target) => /^domain\/(sign-in\/[^/]+\/|passwords\/)/.test(target))
        .map((target) => `${relative(SRC, file)} -> ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it('sessions are minted in one place: completeSignIn', () => {
    expect(callers('mintSession')).toEqual(['domain/sign-in/complete-sign-in.ts']);
    expect(callers('insertSession')).toEqual(['domain/sessions/session-service.ts']);
  });
});
