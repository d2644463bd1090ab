import { BUILT_IN, type Template, type TemplateName, type TemplateSet } from './templates.js';

/** Why a mail could not be rendered: no retry can help (the worker marks it `failed`). */
export class RenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenderError';
  }
}

export type RenderedTemplate = Template;

const PLACEHOLDER = /\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}/gi;

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]!);
}

/**
 * The locales to try for `locale`, most specific first, English last: `de-CH` gives
 * `de-ch`, `de`, `en`.
 */
export function localeChain(locale: string): string[] {
  const chain: string[] = [];
  const parts = locale.toLowerCase().split(/[-_]/).filter(Boolean);
  for (let length = parts.length; length > 0; length--)
    chain.push(parts.slice(0, length).join('-'));
  if (!chain.includes('en')) chain.push('en');
  return chain;
}

/**
 * Renders templates: overrides (SERVICE_MAIL_TEMPLATES_DIR) before the built-in ones, each
 * part of a template found on its own, the requested language before English.
 */
export class MailRenderer {
  constructor(private readonly overrides: TemplateSet = {}) {}

  render(name: TemplateName, locale: string, variables: Record<string, string>): RenderedTemplate {
    const chain = localeChain(locale);
    const part = (key: keyof Template): string => {
      for (const candidate of chain) {
        const text =
          this.overrides[candidate]?.[name]?.[key] ??
          (BUILT_IN as TemplateSet)[candidate]?.[name]?.[key];
        if (text !== undefined) return text;
      }
      throw new RenderError(`template ${name} has no ${key}`);
    };
    const fill = (template: string, escape: (text: string) => string) =>
      template.replace(PLACEHOLDER, (_match, variable: string) => {
        const value = Object.hasOwn(variables, variable) ? variables[variable] : undefined;
        if (typeof value !== 'string') {
          throw new RenderError(`template ${name} needs the variable ${variable}`);
        }
        return escape(value);
      });
    return {
      // One line: a line break in a variable must not reach the header.
      subject: fill(part('subject'), (text) => text.replace(/[\r\n]+/g, ' ')).trim(),
      text: fill(part('text'), (text) => text),
      html: fill(part('html'), escapeHtml),
    };
  }
}
