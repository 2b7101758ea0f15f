/** What every panel says when a request never reached the server (one wording everywhere). */
export const networkErrorMessage = "The server could not be reached. Check your connection and try again.";
