import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readTemplateDir } from '../../src/adapters/mail-template-dir.js';
import { ConfigError } from '../../src/config.js';
import { MailRenderer, RenderError, localeChain } from '../../src/domain/mail/render.js';
import { BUILT_IN, TEMPLATE_NAMES } from '../../src/domain/mail/templates.js';

const MARKUP = `<script>alert("x")</script> & 'quoted'`;
const VARIABLES = {
  code: MARKUP,
  username: MARKUP,
  name: MARKUP,
  time: MARKUP,
  device: MARKUP,
  address: MARKUP,
  link: MARKUP,
};

describe('mail templates', () => {
  const renderer = new MailRenderer();

  it.each(TEMPLATE_NAMES)('%s exists in English and German, every part', (name) => {
    for (const locale of ['en', 'de'] as const) {
      const template = BUILT_IN[locale][name];
      expect(template.subject && template.text && template.html).toBeTruthy();
    }
    expect(renderer.render(name, 'de', VARIABLES).subject).not.toBe(
      renderer.render(name, 'en', VARIABLES).subject,
    );
  });

  it.each(TEMPLATE_NAMES)('%s escapes markup in the HTML part, not in the text', (name) => {
    const rendered = renderer.render(name, 'en', VARIABLES);
    expect(rendered.html).toContain(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;',
    );
    expect(rendered.html).not.toContain('<script>');
    expect(rendered.text).toContain(MARKUP);
  });

  it('keeps a line break in a variable out of the subject', () => {
    const rendered = renderer.render('sign_in_code', 'en', { code: '1\r\nBcc: x@example.com' });
    expect(rendered.subject).toBe('Your sign-in code: 1 Bcc: x@example.com');
  });

  it('falls back from a region to its language, and from an unknown language to English', () => {
    expect(localeChain('de-CH')).toEqual(['de-ch', 'de', 'en']);
    expect(renderer.render('sign_in_code', 'de-CH', { code: '1' }).subject).toBe(
      'Ihr Anmeldecode: 1',
    );
    expect(renderer.render('sign_in_code', 'fr', { code: '1' }).subject).toBe(
      'Your sign-in code: 1',
    );
  });

  it('refuses a render that lacks a variable, by type', () => {
    expect(() => renderer.render('sign_in_code', 'en', {})).toThrow(RenderError);
  });
});

describe('SERVICE_MAIL_TEMPLATES_DIR', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('overrides a part of a template in one language; the rest stays built in', () => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-templates-'));
    writeFileSync(join(dir, 'sign_in_code.de.subject.txt'), 'Anmelden bei Beispiel: {{code}}\n');
    writeFileSync(join(dir, 'sign_in_code.de.html'), '<p class="code">{{ code }}</p>');
    writeFileSync(join(dir, 'sign_in_code.fr.txt'), 'Votre code : {{code}}');
    const renderer = new MailRenderer(readTemplateDir(dir));

    const german = renderer.render('sign_in_code', 'de', { code: '<1>' });
    expect(german.subject).toBe('Anmelden bei Beispiel: <1>');
    expect(german.html).toBe('<p class="code">&lt;1&gt;</p>');
    expect(german.text).toBe(BUILT_IN.de.sign_in_code.text.replace('{{code}}', '<1>'));
    const french = renderer.render('sign_in_code', 'fr', { code: '2' });
    expect(french.text).toBe('Votre code : 2');
    expect(french.subject).toBe('Your sign-in code: 2');
  });

  it('refuses a file it would never use, at start-up', () => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-templates-'));
    writeFileSync(join(dir, 'sign_in_cod.de.txt'), 'typo');
    expect(() => readTemplateDir(dir)).toThrow(ConfigError);
    expect(() => readTemplateDir(dir)).toThrow(/it holds sign_in_cod\.de\.txt; expected/);
  });
});
