import type { Metadata } from "next";
import { AccountForm } from "@/components/auth/AccountForm";
import { EnrolGate } from "@/components/account/EnrolGate";
import { PushSection } from "@/components/account/PushSection";
import { TokensSection } from "@/components/account/TokensSection";
import { TwoFactorSection } from "@/components/account/TwoFactorSection";

export const metadata: Metadata = { title: "Account · gpudeck" };

export default function AccountPage() {
  return (
    <div className="mx-auto max-w-sm space-y-4 py-6">
      <EnrolGate fallback={<h1 className="text-xl font-semibold">Set up two-factor sign-in</h1>}>
        <h1 className="text-xl font-semibold">Change password</h1>
        <AccountForm />
      </EnrolGate>
      <TwoFactorSection />
      <EnrolGate>
        <PushSection />
        <TokensSection />
      </EnrolGate>
    </div>
  );
}
