import { UnitLinkRedirect } from "@/components/fleet/OldLinkRedirect";

/** The single-host panel's unit link: on to the host that has the unit (see OldLinkRedirect). */
export default async function OldUnitPage({ params }: { params: Promise<{ name: string }> }) {
  const { name } = await params;
  return <UnitLinkRedirect name={decodeURIComponent(name)} />;
}
