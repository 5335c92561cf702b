// What pi 0.87.1's session manager imports from @earendil-works/pi-ai, under the writer
// driver: pi-ai 0.87.1's own getCurrentSystemMessage, and a uuidv7 that returns the script's
// next session id (globalThis.__piWriteSessionIds) when there is one.
import { uuidv7 as realUuidv7 } from "../node_modules/@earendil-works/pi-ai/dist/utils/uuid.js";

export { getCurrentSystemMessage } from "../node_modules/@earendil-works/pi-ai/dist/utils/transcript.js";

export function uuidv7(...args) {
	const queue = globalThis.__piWriteSessionIds;
	return queue && queue.length > 0 ? queue.shift() : realUuidv7(...args);
}
