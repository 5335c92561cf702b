// The `uuid` package as pi 0.73.1's session manager sees it under the writer driver: `v7`
// returns the script's next session id (globalThis.__piWriteSessionIds) when there is one.
import { v7 as realV7 } from "uuid";

export function v7(...args) {
	const queue = globalThis.__piWriteSessionIds;
	return queue && queue.length > 0 ? queue.shift() : realV7(...args);
}
