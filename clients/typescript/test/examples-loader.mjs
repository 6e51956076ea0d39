// Lets the examples in examples/typescript run from this repository as they
// would in a project that installed @gatehouse/client: their bare imports
// (`@gatehouse/client`, `ai`, `@langchain/langgraph`...) resolve from this
// package, its build and its node_modules.
//
// Usage: node --import ./clients/typescript/test/examples-loader.mjs examples/typescript/FILE.mjs

import { register } from "node:module";

const hooks = `
const PACKAGE = ${JSON.stringify(new URL("../package.json", import.meta.url).href)};
const EXAMPLES = ${JSON.stringify(new URL("../../../examples/", import.meta.url).href)};
export async function resolve(specifier, context, next) {
  const bare = !/^(\\.|\\/|[a-z]+:)/.test(specifier);
  if (bare && context.parentURL?.startsWith(EXAMPLES)) return next(specifier, { ...context, parentURL: PACKAGE });
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`, import.meta.url);
