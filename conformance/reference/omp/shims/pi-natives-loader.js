const held = new Set();
class FileLock {
	#path; #acquired;
	constructor(path, acquired) { this.#path = path; this.#acquired = acquired; }
	static tryAcquire(path) { const ok = !held.has(path); if (ok) held.add(path); return new FileLock(path, ok); }
	get acquired() { return this.#acquired; }
	release() { if (this.#acquired) { held.delete(this.#path); this.#acquired = false; } }
}
class DesktopSession {
	constructor() { throw new Error("omp-ref: native DesktopSession is not available (pi-natives shim)"); }
}
export function loadNative() { return { FileLock, DesktopSession }; }
export function nativeAddonStatus() { return null; }
export function missingNativeExport(name) {
	return () => { throw new Error(`omp-ref: native ${name} is not available (pi-natives shim)`); };
}
