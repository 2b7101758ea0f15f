/** Filled in by the changes part of the door (see ARCHITECTURE). */
export const changesOps = {};
