import type { Metadata } from "next";
import { UnitView } from "@/components/UnitView";

type Params = { params: Promise<{ host: string; name: string }> };

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  const { host, name } = await params;
  return { title: `${decodeURIComponent(name)} on ${decodeURIComponent(host)} · gpudeck` };
}

export default async function HostUnitPage({ params }: Params) {
  const { host, name } = await params;
  return <UnitView host={decodeURIComponent(host)} name={decodeURIComponent(name)} />;
}
