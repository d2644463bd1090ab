import { auth0 } from './auth0.js';
import { betterAuth } from './better-auth.js';
import { keycloak } from './keycloak.js';
import { kratos } from './kratos.js';
import type { Source } from './source.js';
import { supabase } from './supabase.js';

/** The systems `identity import --from` reads, by the name the option takes. */
export const SOURCES: Record<string, Source> = {
  kratos,
  keycloak,
  supabase,
  auth0,
  'better-auth': betterAuth,
};
