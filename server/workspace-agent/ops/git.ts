/** Filled in by the git part of the door (see ARCHITECTURE). */
export const gitOps = {};
