// What pi 1.5.2's dist/core/session-manager.js imports from @earendil-works/pi-ai, taken from
// pi-ai 1.5.2's own files (its index would load every provider SDK). See ../fetch-pi-1.5.mjs.
export { uuidv7 } from "../vendor/pi-ai-1.5.2/package/dist/utils/uuid.js";
export { getCurrentSystemMessage } from "../vendor/pi-ai-1.5.2/package/dist/utils/transcript.js";
