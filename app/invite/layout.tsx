// The invitation page looks like the sign-in and sign-up pages.
export { default } from "../(auth)/layout";
