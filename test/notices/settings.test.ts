import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, unknownVariableWarnings } from '../../src/config.js';

const BASE = { SERVICE_DATABASE_URL: ':memory:' };
const notices = (value?: string) =>
  [...loadConfig({ ...BASE, SERVICE_MAIL_NOTICES: value }).mailNotices].sort();

describe('SERVICE_MAIL_NOTICES', () => {
  it('is every notice unset or `all`, none with `none`, else the kinds listed', () => {
    const all = ['email_changed', 'passkey_added', 'password_changed', 'second_factor_disabled'];
    expect(notices()).toEqual(all);
    expect(notices('all')).toEqual(all);
    expect(notices('none')).toEqual([]);
    expect(notices(' passkey_added , email_changed')).toEqual(['email_changed', 'passkey_added']);
  });

  it('refuses a name it does not know, in one line naming the accepted ones', () => {
    expect(() => notices('password_changed,pasword_reset')).toThrow(ConfigError);
    expect(() => notices('password_changed,')).toThrow(
      /SERVICE_MAIL_NOTICES=.* expected all, none, or a comma list of password_changed, second_factor_disabled, passkey_added, email_changed/,
    );
  });

  it('is a known setting: no unknown-variable warning', () => {
    expect(unknownVariableWarnings({ SERVICE_MAIL_NOTICES: 'none' })).toEqual([]);
    expect(unknownVariableWarnings({ SERVICE_MAIL_NOTICE: 'none' })).toEqual([
      'SERVICE_MAIL_NOTICE is not a Tessera setting and is ignored: did you mean SERVICE_MAIL_NOTICES?',
    ]);
  });
});
