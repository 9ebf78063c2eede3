import type { Metadata } from "next";
import { HostsView } from "@/components/hosts/HostsView";

export const metadata: Metadata = { title: "Hosts · gpudeck" };

export default function HostsPage() {
  return <HostsView />;
}
