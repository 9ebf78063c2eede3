import type { MetadataRoute } from "next";

/** The installable app (/manifest.webmanifest): it opens the panel itself; push needs the panel on HTTPS. */
export default function manifest(): MetadataRoute.Manifest {
  return {
    name: "gpudeck",
    short_name: "gpudeck",
    description: "Control panel for GPU inference services run by systemd",
    start_url: "/",
    scope: "/",
    display: "standalone",
    background_color: "#09090b",
    theme_color: "#09090b",
    icons: [
      { src: "/icon-192.png", sizes: "192x192", type: "image/png", purpose: "any" },
      { src: "/icon-512.png", sizes: "512x512", type: "image/png", purpose: "maskable" },
      { src: "/icon.svg", sizes: "any", type: "image/svg+xml", purpose: "any" },
    ],
  };
}
