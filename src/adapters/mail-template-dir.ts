import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config.js';
import { isTemplateName, type Template, type TemplateSet } from '../domain/mail/templates.js';

/** `<template>.<locale>.subject.txt`, `<template>.<locale>.txt`, `<template>.<locale>.html`. */
const FILE = /^([a-z_]+)\.([a-z]{2,3}(?:-[a-z0-9]{2,8})*)\.(subject\.txt|txt|html)$/i;
const PART: Record<string, keyof Template> = {
  'subject.txt': 'subject',
  txt: 'text',
  html: 'html',
};

const VARIABLE = 'SERVICE_MAIL_TEMPLATES_DIR';

/**
 * Reads SERVICE_MAIL_TEMPLATES_DIR once, at start-up. A file whose name does not fit is an
 * error then, not a template silently never used; a part not given keeps the built-in one.
 */
export function readTemplateDir(dir: string): TemplateSet {
  const set: TemplateSet = {};
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    throw ConfigError.unusable(VARIABLE, dir, `it cannot be read (${String(error)})`);
  }
  for (const name of names) {
    const match = FILE.exec(name);
    if (!match || !isTemplateName(match[1]!)) {
      throw ConfigError.unusable(
        VARIABLE,
        dir,
        `it holds ${name}; expected <template>.<locale>.subject.txt, .txt or .html of a known template`,
      );
    }
    const [, template, locale, suffix] = match as unknown as [string, string, string, string];
    const text = readFileSync(join(dir, name), 'utf8');
    const part = PART[suffix.toLowerCase()]!;
    const byTemplate = (set[locale.toLowerCase()] ??= {});
    const parts = (byTemplate[template as keyof typeof byTemplate] ??= {});
    parts[part] = part === 'subject' ? text.trim() : text;
  }
  return set;
}
