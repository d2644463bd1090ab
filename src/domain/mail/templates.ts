/** The mails Tessera sends; each exists in English and in every language of BUILT_IN. */
export const TEMPLATE_NAMES = [
  'verification_code',
  'recovery_code',
  'sign_in_code',
  'password_changed',
  'second_factor_disabled',
  'passkey_added',
  'email_verification',
  'email_changed',
] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

export function isTemplateName(name: string): name is TemplateName {
  return (TEMPLATE_NAMES as readonly string[]).includes(name);
}

/**
 * One template in one language. `{{name}}` is a placeholder: replaced as it is in the
 * subject and the text part, HTML-escaped in the HTML part.
 */
export interface Template {
  subject: string;
  text: string;
  html: string;
}

export type TemplateSet = Partial<Record<string, Partial<Record<TemplateName, Partial<Template>>>>>;

const html = (...paragraphs: string[]) =>
  `<!doctype html>\n<html><body style="font-family: sans-serif; line-height: 1.5">\n${paragraphs
    .map((paragraph) => `<p>${paragraph}</p>`)
    .join('\n')}\n</body></html>\n`;

/** The security notices' when and where (notices/notices.ts fills them in). */
const WHEN_WHERE_EN = 'When: {{time}}\nDevice: {{device}}\nAddress: {{address}}\n';
const WHEN_WHERE_DE = 'Wann: {{time}}\nGerät: {{device}}\nAdresse: {{address}}\n';
const whenWhereHtml = (text: string) => text.trim().split('\n').join('<br>\n');

/** A notice: hello, what changed, when and where, what to do if it was not the user. */
const notice = (
  hello: string,
  what: string,
  whenWhere: string,
  ifNotYou: string,
): Omit<Template, 'subject'> => ({
  text: `${hello}\n\n${what}\n\n${whenWhere}\n${ifNotYou}\n`,
  html: html(
    hello,
    what.replace('{{username}}', '<strong>{{username}}</strong>'),
    whenWhereHtml(whenWhere),
    ifNotYou,
  ),
});

const IF_NOT_YOU_EN =
  'If this was not you, someone else may have access to your account: sign in, change your password and check your sign-in methods at once, or ask your administrator for help.';
const IF_NOT_YOU_DE =
  'Falls Sie das nicht waren, hat womöglich jemand anderes Zugang zu Ihrem Konto: Melden Sie sich sofort an, ändern Sie Ihr Passwort und prüfen Sie Ihre Anmeldemethoden, oder bitten Sie Ihre Administration um Hilfe.';

const en = (what: string): Omit<Template, 'subject'> =>
  notice('Hello {{name}},', what, WHEN_WHERE_EN, IF_NOT_YOU_EN);
const de = (what: string): Omit<Template, 'subject'> =>
  notice('Hallo {{name}},', what, WHEN_WHERE_DE, IF_NOT_YOU_DE);

const CODE = '<strong style="font-size: 1.4em; letter-spacing: 0.1em">{{code}}</strong>';

/** Built-in templates by locale; `en` is complete and the fallback of every other. */
export const BUILT_IN: Record<'en' | 'de', Record<TemplateName, Template>> = {
  en: {
    verification_code: {
      subject: 'Your verification code: {{code}}',
      text: 'Your code to confirm this email address is {{code}}.\n\nIf you did not ask for it, ignore this mail.\n',
      html: html(
        `Your code to confirm this email address is ${CODE}.`,
        'If you did not ask for it, ignore this mail.',
      ),
    },
    recovery_code: {
      subject: 'Your account recovery code: {{code}}',
      text: 'Your code to recover your account and set a new password is {{code}}.\n\nOr open this link: {{link}}\n\nIt works for 15 minutes. If you did not ask for it, someone may be trying to get into your account: do not pass the code on, and ignore this mail; your password stays as it is.\n',
      html: html(
        `Your code to recover your account and set a new password is ${CODE}.`,
        'Or <a href="{{link}}">set a new password here</a>.',
        'It works for 15 minutes. If you did not ask for it, someone may be trying to get into your account: do not pass the code on, and ignore this mail; your password stays as it is.',
      ),
    },
    sign_in_code: {
      subject: 'Your sign-in code: {{code}}',
      text: 'Your code to sign in is {{code}}.\n\nIf you did not try to sign in, ignore this mail.\n',
      html: html(
        `Your code to sign in is ${CODE}.`,
        'If you did not try to sign in, ignore this mail.',
      ),
    },
    password_changed: {
      subject: 'Your password was changed',
      ...en('The password of your account {{username}} was changed.'),
    },
    second_factor_disabled: {
      subject: 'Two-step sign-in was turned off',
      ...en(
        'Two-step sign-in (the code from your authenticator app) was turned off for your account {{username}}, and its recovery codes no longer work.',
      ),
    },
    passkey_added: {
      subject: 'A passkey was added to your account',
      ...en(
        'A passkey was added to your account {{username}}: it can now sign in to your account.',
      ),
    },
    email_verification: {
      subject: 'Confirm your email address: {{code}}',
      text: 'Your code to confirm this email address is {{code}}.\n\nOr open this link: {{link}}\n\nIf you did not ask for it, ignore this mail: your address stays as it was.\n',
      html: html(
        `Your code to confirm this email address is ${CODE}.`,
        'Or <a href="{{link}}">confirm the address here</a>.',
        'If you did not ask for it, ignore this mail: your address stays as it was.',
      ),
    },
    email_changed: {
      subject: 'Your email address was changed',
      text: 'The email address of your account {{username}} was changed to {{address}}. Mail for the account now goes there, not here.\n\nIf this was not you, recover your account at once.\n',
      html: html(
        'The email address of your account <strong>{{username}}</strong> was changed to <strong>{{address}}</strong>. Mail for the account now goes there, not here.',
        'If this was not you, recover your account at once.',
      ),
    },
  },
  de: {
    verification_code: {
      subject: 'Ihr Bestätigungscode: {{code}}',
      text: 'Ihr Code zur Bestätigung dieser E-Mail-Adresse lautet {{code}}.\n\nFalls Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail.\n',
      html: html(
        `Ihr Code zur Bestätigung dieser E-Mail-Adresse lautet ${CODE}.`,
        'Falls Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail.',
      ),
    },
    recovery_code: {
      subject: 'Ihr Wiederherstellungscode: {{code}}',
      text: 'Ihr Code zur Wiederherstellung Ihres Kontos und für ein neues Passwort lautet {{code}}.\n\nOder öffnen Sie diesen Link: {{link}}\n\nEr gilt 15 Minuten. Falls Sie ihn nicht angefordert haben, versucht womöglich jemand, in Ihr Konto zu gelangen: Geben Sie den Code nicht weiter und ignorieren Sie diese E-Mail; Ihr Passwort bleibt, wie es ist.\n',
      html: html(
        `Ihr Code zur Wiederherstellung Ihres Kontos und für ein neues Passwort lautet ${CODE}.`,
        'Oder <a href="{{link}}">legen Sie hier ein neues Passwort fest</a>.',
        'Er gilt 15 Minuten. Falls Sie ihn nicht angefordert haben, versucht womöglich jemand, in Ihr Konto zu gelangen: Geben Sie den Code nicht weiter und ignorieren Sie diese E-Mail; Ihr Passwort bleibt, wie es ist.',
      ),
    },
    sign_in_code: {
      subject: 'Ihr Anmeldecode: {{code}}',
      text: 'Ihr Code zur Anmeldung lautet {{code}}.\n\nFalls Sie sich nicht anmelden wollten, ignorieren Sie diese E-Mail.\n',
      html: html(
        `Ihr Code zur Anmeldung lautet ${CODE}.`,
        'Falls Sie sich nicht anmelden wollten, ignorieren Sie diese E-Mail.',
      ),
    },
    password_changed: {
      subject: 'Ihr Passwort wurde geändert',
      ...de('Das Passwort Ihres Kontos {{username}} wurde geändert.'),
    },
    second_factor_disabled: {
      subject: 'Die Anmeldung in zwei Schritten wurde ausgeschaltet',
      ...de(
        'Die Anmeldung in zwei Schritten (der Code aus Ihrer Authenticator-App) wurde für Ihr Konto {{username}} ausgeschaltet; seine Wiederherstellungscodes gelten nicht mehr.',
      ),
    },
    passkey_added: {
      subject: 'Ihrem Konto wurde ein Passkey hinzugefügt',
      ...de(
        'Ihrem Konto {{username}} wurde ein Passkey hinzugefügt: Mit ihm kann man sich jetzt bei Ihrem Konto anmelden.',
      ),
    },
    email_verification: {
      subject: 'Bestätigen Sie Ihre E-Mail-Adresse: {{code}}',
      text: 'Ihr Code zur Bestätigung dieser E-Mail-Adresse lautet {{code}}.\n\nOder öffnen Sie diesen Link: {{link}}\n\nFalls Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail: Ihre Adresse bleibt, wie sie war.\n',
      html: html(
        `Ihr Code zur Bestätigung dieser E-Mail-Adresse lautet ${CODE}.`,
        'Oder <a href="{{link}}">bestätigen Sie die Adresse hier</a>.',
        'Falls Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail: Ihre Adresse bleibt, wie sie war.',
      ),
    },
    email_changed: {
      subject: 'Ihre E-Mail-Adresse wurde geändert',
      text: 'Die E-Mail-Adresse Ihres Kontos {{username}} wurde in {{address}} geändert. E-Mails zum Konto gehen nun dorthin, nicht mehr hierher.\n\nFalls Sie das nicht waren, stellen Sie Ihr Konto sofort wieder her.\n',
      html: html(
        'Die E-Mail-Adresse Ihres Kontos <strong>{{username}}</strong> wurde in <strong>{{address}}</strong> geändert. E-Mails zum Konto gehen nun dorthin, nicht mehr hierher.',
        'Falls Sie das nicht waren, stellen Sie Ihr Konto sofort wieder her.',
      ),
    },
  },
};
