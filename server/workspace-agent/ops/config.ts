/** Filled in by the config part of the door (see ARCHITECTURE). */
export const configOps = {};
