import type { MetadataRoute } from "next";

/** The web app manifest (served at /manifest.webmanifest): Conduit installs as a standalone app on phones. */
export default function manifest(): MetadataRoute.Manifest {
  return {
    id: "/",
    name: "Conduit",
    short_name: "Conduit",
    description: "A multi-user web IDE for Claude Code",
    start_url: "/workspaces",
    scope: "/",
    display: "standalone",
    background_color: "#18181b",
    theme_color: "#18181b",
    icons: [
      { src: "/icons/icon-192.png", sizes: "192x192", type: "image/png", purpose: "any" },
      { src: "/icons/icon-512.png", sizes: "512x512", type: "image/png", purpose: "any" },
      { src: "/icons/icon-maskable-512.png", sizes: "512x512", type: "image/png", purpose: "maskable" },
    ],
    shortcuts: [{ name: "Approvals inbox", url: "/inbox" }],
  };
}
