import { GpusLinkRedirect } from "@/components/fleet/OldLinkRedirect";

/** The single-host panel's GPUs link: the only host's GPUs, or a choice of hosts (see OldLinkRedirect). */
export default function OldGpusPage() {
  return <GpusLinkRedirect />;
}
