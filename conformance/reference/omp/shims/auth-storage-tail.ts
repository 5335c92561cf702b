// Appended to @oh-my-pi/pi-ai 18.2.x's src/auth-storage.ts by omp-runtime.ts: the one export
// omp 18.3.4 imports from it that 18.2.x lacks. Only omp's settings registry reads it (the
// default of a usage-reserve setting); no session code does, so its value does not matter here.
export const DEFAULT_USAGE_RESERVE_PCT = 10;
