import type { Static } from '@sinclair/typebox';
import { describe, expectTypeOf, it } from 'vitest';
import type { Registration } from '../../src/domain/identities/identity-service.js';
import type { updateProfile } from '../../src/domain/identities/identity-service.js';
import type { Identity } from '../../src/domain/identities/identity.js';
import type { Attachment } from '../../src/domain/links/link-service.js';
import type { Link, LinkKey } from '../../src/domain/links/link.js';
import type { FlowView, StartedFlow } from '../../src/domain/login-flows/flow.js';
import type { LinkSignIn, LinkSignInResult } from '../../src/domain/sign-in/link/link-sign-in.js';
import type { DirectPasswordInput } from '../../src/domain/sign-in/password/authenticate-password.js';
import type { MintedSession, Session } from '../../src/domain/sessions/session.js';
import type { ErrorBody } from '../../src/http/errors.js';
import type { PasswordBody, RegisterBody } from '../../src/http/routes/direct-auth.js';
import type { ProfileBody } from '../../src/http/routes/identities.js';
import type {
  AttachBody,
  DetachBody,
  LinkSchema,
  SignInBody,
  SignInResponse,
} from '../../src/http/routes/links.js';
import type { FlowSchema, StartedFlowSchema } from '../../src/http/flow-schemas.js';
import type {
  ErrorSchema,
  IdentitySchema,
  MintedSessionSchema,
  SessionSchema,
} from '../../src/http/schemas.js';

/**
 * The schemas the OpenAPI document is generated from describe exactly the types the domain
 * renders and accepts. These are compile-time checks: `npm run typecheck` (CI) fails when a
 * field is added, removed, renamed or retyped on one side only.
 */
describe('schemas and domain types agree', () => {
  it('response schemas equal the types the handlers return', () => {
    expectTypeOf<Static<typeof IdentitySchema>>().toEqualTypeOf<Identity>();
    expectTypeOf<Static<typeof SessionSchema>>().toEqualTypeOf<Session>();
    expectTypeOf<Static<typeof MintedSessionSchema>>().toEqualTypeOf<MintedSession>();
    expectTypeOf<Static<typeof ErrorSchema>>().toEqualTypeOf<ErrorBody>();
    expectTypeOf<Static<typeof LinkSchema>>().toEqualTypeOf<Link>();
    expectTypeOf<Static<typeof FlowSchema>>().toEqualTypeOf<FlowView>();
    // allOf schemas are intersections (`Flow & { csrf_token }`): `branded` compares them
    // property by property instead of requiring the identical type expression.
    expectTypeOf<Static<typeof StartedFlowSchema>>().branded.toEqualTypeOf<StartedFlow>();
    expectTypeOf<Static<typeof SignInResponse>>().branded.toEqualTypeOf<LinkSignInResult>();
  });

  it('request body schemas equal the inputs the use cases take', () => {
    expectTypeOf<Static<typeof RegisterBody>>().toEqualTypeOf<Registration>();
    expectTypeOf<Static<typeof PasswordBody>>().toEqualTypeOf<DirectPasswordInput>();
    expectTypeOf<Static<typeof ProfileBody>>().toEqualTypeOf<Parameters<typeof updateProfile>[3]>();
    expectTypeOf<Static<typeof SignInBody>>().toEqualTypeOf<LinkSignIn>();
    expectTypeOf<Static<typeof AttachBody>>().toEqualTypeOf<Attachment>();
    expectTypeOf<Static<typeof DetachBody>>().toEqualTypeOf<LinkKey>();
  });
});
