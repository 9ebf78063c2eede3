import type { Metadata } from "next";
import { GpusView } from "@/components/GpusView";

type Params = { params: Promise<{ host: string }> };

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  return { title: `GPUs of ${decodeURIComponent((await params).host)} · gpudeck` };
}

export default async function HostGpusPage({ params }: Params) {
  return <GpusView host={decodeURIComponent((await params).host)} />;
}
