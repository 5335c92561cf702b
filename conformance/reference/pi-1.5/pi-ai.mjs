// What pi 1.5.2's dist/core/session-manager.js imports from @earendil-works/pi-ai, taken from
// pi-ai 1.5.2's own files (its index would load every provider SDK). See ../fetch-pi-1.5.mjs.
// Under the writer driver (../write-driver.mjs), uuidv7 returns the script's next session id
// (globalThis.__piWriteSessionIds) when there is one; otherwise pi-ai's own.
import { uuidv7 as realUuidv7 } from "../vendor/pi-ai-1.5.2/package/dist/utils/uuid.js";

export { getCurrentSystemMessage } from "../vendor/pi-ai-1.5.2/package/dist/utils/transcript.js";

export function uuidv7(...args) {
	const queue = globalThis.__piWriteSessionIds;
	return queue && queue.length > 0 ? queue.shift() : realUuidv7(...args);
}
