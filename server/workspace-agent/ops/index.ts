/** Every operation a door runs, by name. The door's entry imports this; callers import only its type. */
import { changesOps } from "./changes";
import { configOps } from "./config";
import { fileOps } from "./files";
import { gitOps } from "./git";

export const doorOps = { ...fileOps, ...gitOps, ...changesOps, ...configOps };
export type DoorOps = typeof doorOps;
export type DoorOpName = keyof DoorOps;
