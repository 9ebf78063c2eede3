import type { Metadata } from "next";
import { AccountForm } from "@/components/auth/AccountForm";
import { PushSection } from "@/components/account/PushSection";
import { TokensSection } from "@/components/account/TokensSection";

export const metadata: Metadata = { title: "Account · gpudeck" };

export default function AccountPage() {
  return (
    <div className="mx-auto max-w-sm space-y-4 py-6">
      <h1 className="text-xl font-semibold">Change password</h1>
      <AccountForm />
      <PushSection />
      <TokensSection />
    </div>
  );
}
