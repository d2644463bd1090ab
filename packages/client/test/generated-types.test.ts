import type { Static } from '@sinclair/typebox';
import { describe, expectTypeOf, it } from 'vitest';
import type { components } from '@tessera/client';
import type { PasswordBody, RegisterBody } from '../../../src/http/routes/direct-auth.js';
import type { ProfileBody } from '../../../src/http/routes/identities.js';
import type {
  AttachBody,
  DetachBody,
  LinkSchema,
  SignInResponse,
} from '../../../src/http/routes/links.js';
import type { FlowSchema, StartedFlowSchema } from '../../../src/http/flow-schemas.js';
import type {
  ErrorSchema,
  IdentitySchema,
  MintedSessionSchema,
  SessionSchema,
} from '../../../src/http/schemas.js';

type Generated = components['schemas'];

/**
 * Compile-time checks (`npm run typecheck`, CI): the client's checked-in generated types
 * equal the server's route schemas. A schema changed on the server without
 * `npm run client:generate` is a type error here, naming the field.
 */
describe('generated client types equal the server schemas', () => {
  it('responses', () => {
    expectTypeOf<Generated['Identity']>().toEqualTypeOf<Static<typeof IdentitySchema>>();
    expectTypeOf<Generated['Session']>().toEqualTypeOf<Static<typeof SessionSchema>>();
    expectTypeOf<Generated['MintedSession']>().toEqualTypeOf<Static<typeof MintedSessionSchema>>();
    expectTypeOf<Generated['Error']>().toEqualTypeOf<Static<typeof ErrorSchema>>();
    expectTypeOf<Generated['Link']>().toEqualTypeOf<Static<typeof LinkSchema>>();
    expectTypeOf<Generated['Flow']>().toEqualTypeOf<Static<typeof FlowSchema>>();
    expectTypeOf<Generated['StartedFlow']>().branded.toEqualTypeOf<
      Static<typeof StartedFlowSchema>
    >();
    expectTypeOf<Generated['LinkSignInResult']>().branded.toEqualTypeOf<
      Static<typeof SignInResponse>
    >();
  });

  it('request bodies', () => {
    expectTypeOf<Generated['Registration']>().toEqualTypeOf<Static<typeof RegisterBody>>();
    expectTypeOf<Generated['PasswordCredentials']>().toEqualTypeOf<Static<typeof PasswordBody>>();
    expectTypeOf<Generated['ProfileUpdate']>().toEqualTypeOf<Static<typeof ProfileBody>>();
    expectTypeOf<Generated['LinkAttachment']>().toEqualTypeOf<Static<typeof AttachBody>>();
    expectTypeOf<Generated['LinkKey']>().toEqualTypeOf<Static<typeof DetachBody>>();
  });
});
