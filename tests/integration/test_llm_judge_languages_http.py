"""LLM judges in any language, over the real OpenAI SDK against a scripted server on 127.0.0.1:
what the prompts ask for (claims in the answer's language, quotes verbatim in the context's),
that every script reaches the model intact, and that claims map back into the response."""

import json
from typing import Any

import pytest
from tests.support.loopback import LoopbackServer, ok_openai

from vera import Claim, Verdict
from vera.judges import LLMJudge
from vera.providers import ManagedChatModel
from vera.providers._openai import OpenAIChatModel

WHITEBOX = "the providers' own clients, retries, cache and batches"

ANSWERS = {
    "en": ("The return window is 60 days.", "Refunds go to the original payment method."),
    "de": ("Die Rückgabefrist beträgt 60 Tage.", "Erstattungen gehen an die Zahlungsart."),
    "fr": ("Le délai de retour est de 60 jours.", "Le remboursement va au moyen initial."),
    "es": ("El plazo de devolución es de 60 días.", "El reembolso va al método original."),
    "pt": ("O prazo de devolução é de 60 dias.", "O reembolso vai para o método original."),
    "it": ("Il periodo di reso è di 60 giorni.", "Il rimborso va al metodo originale."),
    "nl": ("De retourtermijn is 60 dagen.", "Terugbetalingen gaan naar de betaalwijze."),
    "ja": ("返品期間は60日です。", "返金は元の支払い方法に行われます。"),
    "zh": ("退货期限为60天。", "退款将退回原支付方式。"),
    "ko": ("반품 기간은 60일입니다.", "환불은 원래 결제 수단으로 처리됩니다."),
    "ar": ("فترة الإرجاع 60 يومًا.", "يتم رد المبلغ إلى وسيلة الدفع الأصلية."),
    "hi": ("वापसी की अवधि 60 दिन है।", "धनवापसी मूल भुगतान विधि से की जाती है।"),
}


def reply(payload: Any) -> Any:
    return ok_openai(json.dumps(payload, ensure_ascii=False))


def judge_for(loopback: LoopbackServer) -> LLMJudge:
    model = OpenAIChatModel("gpt-test", base_url=loopback.openai_url, timeout=2)
    return LLMJudge(ManagedChatModel(model))


def user_message(loopback: LoopbackServer, index: int) -> str:
    messages = loopback.requests[index].json["messages"]
    return str(messages[-1]["content"])


@pytest.mark.parametrize("language", sorted(ANSWERS))
async def test_claims_are_asked_for_in_the_answers_language_and_map_back_exactly(
    loopback: LoopbackServer, language: str
) -> None:
    first, second = ANSWERS[language]
    # Bidirectional and CJK text spaced as the language spaces it.
    response = first + ("" if language in ("ja", "zh") else " ") + second
    loopback.script(
        reply({"claims": [{"number": 1, "text": first}, {"number": 2, "text": second}]})
    )
    claims = await judge_for(loopback).extract_claims(response, query="?")
    sent = user_message(loopback, 0)
    # Every script reaches the model intact, one numbered sentence a line.
    assert f"\n1 {first}\n2 {second}\n" in sent
    assert "in the language of the answer, never translated" in sent
    assert [c.text for c in claims] == [first, second]
    for claim in claims:
        assert claim.span is not None
        assert response[claim.span[0] : claim.span[1]] == claim.text


async def test_the_cross_lingual_case_is_stated_and_a_verbatim_quote_is_found(
    loopback: LoopbackServer,
) -> None:
    contexts = [
        "Die Rückgabefrist beträgt 30 Tage ab Lieferung. Erstattungen erfolgen auf die "
        "ursprüngliche Zahlungsart."
    ]
    claims = [Claim("c1", "The return window is 60 days.")]
    quote = "Die Rückgabefrist beträgt 30 Tage ab Lieferung."
    loopback.script(
        reply(
            {
                "verdicts": [
                    {
                        "claim": 1,
                        "verdict": "CONTRADICTED",
                        "context": 1,
                        "quote": quote,
                        "reason": "30 Tage, not 60 days.",
                    }
                ]
            }
        )
    )
    (verdict,) = await judge_for(loopback).verify_claims(claims, contexts)
    sent = user_message(loopback, 0)
    # The context goes out sentence by sentence, each numbered, never translated.
    assert quote in sent and "Erstattungen erfolgen auf die ursprüngliche Zahlungsart." in sent
    assert "may be in different languages" in sent
    assert verdict.verdict is Verdict.CONTRADICTED
    assert verdict.evidence == quote
    assert verdict.quote_found is True
