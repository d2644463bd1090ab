/** The part of ua-parser-js 1.x (MIT; ships no types) that src/lib/user-agent.ts uses. */
declare module 'ua-parser-js' {
  interface UAComponent {
    name?: string;
    version?: string;
    major?: string;
  }
  class UAParser {
    constructor(userAgent?: string);
    getBrowser(): UAComponent;
    getOS(): UAComponent;
  }
  export default UAParser;
}
