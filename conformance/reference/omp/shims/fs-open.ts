import * as fs from "node:fs";
export function openCloexecSync(path: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode | null): number {
	return fs.openSync(path, flags, mode);
}
