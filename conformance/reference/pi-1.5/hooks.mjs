// Module resolution hooks (node:module register) for pi 1.5.2: inside vendor/pi-coding-agent-1.5.2,
// `@earendil-works/pi-ai` resolves to ./pi-ai.mjs (pi-ai 1.5.2's uuidv7 and getCurrentSystemMessage)
// instead of node_modules' pi-ai (0.87.1's, a dependency of pi 0.87.1). See ../fetch-pi-1.5.mjs.
const PI_AI = new URL("./pi-ai.mjs", import.meta.url).href;
const AGENT = new URL("../vendor/pi-coding-agent-1.5.2/", import.meta.url).href;

export async function resolve(specifier, context, next) {
	if (specifier === "@earendil-works/pi-ai" && context.parentURL?.startsWith(AGENT)) {
		return { url: PI_AI, shortCircuit: true };
	}
	return next(specifier, context);
}
