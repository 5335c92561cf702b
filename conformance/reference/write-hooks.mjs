// write-hooks.mjs — module resolution hooks (node:module register) of the writer driver
// (write-driver.mjs): the session ids pi draws (UUID v7) come from the script, like its entry
// ids and clock. pi's session-manager.js imports its UUID v7 function from a package; inside
// pi 0.73.1 `uuid` and inside pi 0.87.1 `@earendil-works/pi-ai` resolve here to modules that
// return the script's next session id (globalThis.__piWriteSessionIds) and otherwise call the
// real function. pi 1.5.2's import already resolves to pi-1.5/pi-ai.mjs, which does the same.
const AGENT_073 = new URL("./node_modules/@mariozechner/pi-coding-agent/", import.meta.url).href;
const AGENT_087 = new URL("./node_modules/@earendil-works/pi-coding-agent/", import.meta.url).href;
const UUID = new URL("./write-ids/uuid.mjs", import.meta.url).href;
const PI_AI_087 = new URL("./write-ids/pi-ai-0.87.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
	const parent = context.parentURL ?? "";
	if (specifier === "uuid" && parent.startsWith(AGENT_073)) {
		return { url: UUID, shortCircuit: true };
	}
	if (specifier === "@earendil-works/pi-ai" && parent.startsWith(AGENT_087)) {
		return { url: PI_AI_087, shortCircuit: true };
	}
	return next(specifier, context);
}
