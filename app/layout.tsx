import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import { ServiceWorkerRegistration } from "@/components/service-worker-registration";
import "./globals.css";

export const metadata: Metadata = {
  // each page names itself: "<session> · <workspace> · Conduit", "Reports · Conduit"
  title: { default: "Conduit", template: "%s · Conduit" },
  description: "A multi-user web IDE for Claude Code",
  appleWebApp: { capable: true, title: "Conduit", statusBarStyle: "black-translucent" },
  // public/favicon.ico (a PNG in an ICO; served as a file: Next's app/favicon.ico pipeline wants RGBA)
  icons: { icon: [{ url: "/favicon.ico" }, { url: "/icons/icon-192.png", type: "image/png", sizes: "192x192" }], apple: "/icons/apple-touch-icon.png" },
};

export const viewport: Viewport = {
  width: "device-width",
  initialScale: 1,
  themeColor: "#18181b",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen font-sans">
        {children}
        <ServiceWorkerRegistration />
      </body>
    </html>
  );
}
