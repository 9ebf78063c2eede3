import type { Metadata } from "next";
import { SetupForm } from "@/components/auth/SetupForm";

export const metadata: Metadata = { title: "First-run setup · gpudeck" };

export default function SetupPage() {
  return (
    <div className="mx-auto max-w-sm space-y-4 py-6">
      <h1 className="text-xl font-semibold">First-run setup</h1>
      <SetupForm />
    </div>
  );
}
