import AdminUsersPage from "../page";

export const dynamic = "force-dynamic";

/** `/admin/users` is the same list as `/admin` (audit rows link here by email). */
export default AdminUsersPage;
