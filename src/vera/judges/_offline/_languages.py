"""The offline judge's languages: one `Lexicon` each, and which one a sample is read with.

The judge compares words, so it can only judge a language whose function words, negations,
antonyms and number words it knows. `SUPPORTED` is that set (docs/languages.md); a sample in
any other language is refused by `OfflineJudge` rather than read with English rules.

`analyse` (tokens.py) reads the lexicon of the sample being judged from a context variable
that `reading(code)` sets for the length of a `with` block: the tokeniser is called from many
places, and threading a language through all of them would touch every signature. English is
the default, so code that never names a language reads exactly as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace

from vera._text._lexicon import STOPWORDS
from vera.judges._offline import _lexicon as en


@dataclass(frozen=True, slots=True)
class Lexicon:
    """What the tokeniser needs to know of one language. Everything lowercased."""

    code: str
    stopwords: frozenset[str]
    negations: frozenset[str]
    light_words: frozenset[str] = frozenset()
    exclusive: frozenset[str] = frozenset()
    number_words: dict[str, int] = field(default_factory=dict)
    antonym_pairs: tuple[tuple[str, str], ...] = ()
    value_groups: tuple[dict[str, str], ...] = ()
    """Words of which a statement holds one value ("monthly", "annually"), each mapped to its
    value: a claim with one and a sentence with another of the same group disagree."""
    synonyms: tuple[tuple[str, ...], ...] = ()
    """Groups of words that say the same ("buy", "purchase"): a paraphrase in one of them is
    evidence of support (never full support: the words may still differ in meaning)."""
    conditions: frozenset[str] = frozenset()
    """Words that open a condition or restriction ("if", "for", "の場合"): content the context
    lacks right beside one is an invented qualifier, not a paraphrase."""
    cjk: bool = False
    """Written without spaces between words (or, for Korean, with particles glued on): words
    are read as character bigrams (cjk.py), and a single character can be a content word."""
    names: bool = True
    """Whether a capitalised word inside a sentence is a name (not in German: every noun is
    capitalised)."""
    name_words: int = 0
    """The fewest capitalised words that make a name where `names` is False: German nouns
    are capitalised one by one, but "Ashgrove Energy Partners" is a name; in CJK text any
    capitalised Latin word is (1). 0: no names at all."""
    elisions: bool = False
    """Whether "l'", "d'", "dell'" open a word and are dropped (French, Italian)."""
    denials: frozenset[str] = frozenset()
    """Words that deny without a negation ("refused", "lacks", "instead"): a sentence with
    one says in other words what a negated sentence says, so the two are no flip."""

    @property
    def shortest(self) -> int:
        """The fewest characters a content word has: one in CJK (天, 日), else two."""
        return 1 if self.cjk else 2


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _pairs(text: str) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for pair in text.split():
        left, right = pair.split("/")
        out.append((left, right))
    return tuple(out)


def _groups(*groups: str) -> tuple[dict[str, str], ...]:
    """Value groups from lines of words, synonyms joined by "=": "monthly annually=yearly"."""
    out = []
    for group in groups:
        values: dict[str, str] = {}
        for item in group.split():
            names = item.split("=")
            values.update(dict.fromkeys(names, names[0]))
        out.append(values)
    return tuple(out)


def _synonyms(text: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(group.split("=")) for group in text.split())


def _numbers(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in text.split():
        word, value = item.split("=")
        out[word] = int(value)
    return out


ENGLISH = Lexicon(
    code="en",
    synonyms=_synonyms(
        "buy=purchase=bought refund=reimburse=repay=money=reimbursement customer=client=buyer "
        "get=receive=obtain begin=start=commence end=finish=conclude help=assist=support "
        "allow=permit=let=enable need=require=must shop=store large=big small=little "
        "fast=quick=rapid price=cost=fee phone=telephone=call email=mail staff=employee "
        "cancel=terminate show=display=indicate use=utilize=employ"
    ),
    value_groups=_groups(
        "daily=everyday weekly biweekly=fortnightly monthly quarterly annually=yearly=annual",
        "monday tuesday wednesday thursday friday saturday sunday",
    ),
    conditions=en.CONDITIONS,
    stopwords=STOPWORDS,
    negations=en.NEGATIONS,
    light_words=en.LIGHT_WORDS,
    exclusive=en.EXCLUSIVE,
    number_words=en.NUMBER_WORDS,
    antonym_pairs=en.ANTONYM_PAIRS,
    denials=en.DENIALS,
)

GERMAN = Lexicon(
    code="de",
    synonyms=_synonyms(
        "innerhalb=binnen rückgabe=zurückgeben=zurückgegeben=retoure=rücksendung "
        "erstattung=rückerstattung=geld kunde=käufer kaufen=kauf=erwerb beginn=start "
        "ende=schluss preis=kosten=gebühr laden=geschäft=filiale"
    ),
    value_groups=_groups(
        "täglich wöchentlich monatlich vierteljährlich jährlich",
        "montag dienstag mittwoch donnerstag freitag samstag sonntag",
    ),
    conditions=_words("wenn falls sofern für bei nur"),
    stopwords=_words(
        """
        der die das den dem des ein eine einen einem einer eines und oder aber doch wenn dann
        als wie so dass daß ob weil da denn ich du er sie es wir ihr mich mir dich dir sich uns
        euch ihm ihn ihnen sein seine seinen seinem seiner ihre ihren ihrem ihrer unser unsere
        euer dieser diese dieses diesen diesem jener jene man ist sind war waren wird werden
        wurde wurden worden sein gewesen hat haben hatte hatten habe kann können konnte muss
        müssen soll sollen darf dürfen will wollen mag möchte von zu zum zur im in am an auf
        aus bei mit nach seit über unter vor hinter neben zwischen durch für gegen um bis pro
        je also auch noch schon nur sehr mehr bereits alle allen aller alles jede jeder jedes
        jeden jedem was wer wo wann warum welche welcher welches es gibt hier dort bzw usw
        """
    ),
    negations=_words("nicht kein keine keinen keinem keiner keines nie niemals nichts ohne"),
    light_words=_words("laut gemäß kontext dokument dokumente quelle quellen angegeben"),
    exclusive=_words("nur ausschließlich lediglich"),
    number_words=_numbers(
        "zwei=2 drei=3 vier=4 fünf=5 sechs=6 sieben=7 acht=8 neun=9 zehn=10 zwölf=12 "
        "zwanzig=20 dreißig=30 vierzig=40 fünfzig=50 sechzig=60 neunzig=90 hundert=100"
    ),
    antonym_pairs=_pairs(
        "erhöht/gesenkt erhöhen/senken steigt/sinkt mehr/weniger vor/nach höher/niedriger "
        "maximal/mindestens maximum/minimum erlaubt/verboten kostenlos/kostenpflichtig "
        "möglich/unmöglich erste/letzte früher/später offen/geschlossen pflicht/optional "
        "inklusive/exklusive öffentlich/privat gültig/ungültig"
    ),
    names=False,
    name_words=2,
)

FRENCH = Lexicon(
    code="fr",
    synonyms=_synonyms(
        "remboursement=rembourser=argent acheter=achat client=acheteur demander=solicite "
        "prix=coût=tarif magasin=boutique commencer=débuter finir=terminer"
    ),
    value_groups=_groups(
        "quotidien=quotidienne=quotidiennement hebdomadaire mensuel=mensuelle=mensuellement "
        "trimestriel=trimestrielle annuel=annuelle=annuellement",
        "lundi mardi mercredi jeudi vendredi samedi dimanche",
    ),
    conditions=_words("si pour lorsque quand sauf"),
    stopwords=_words(
        """
        le la les l un une des du de d au aux et ou mais si donc car que qu qui quoi dont où
        je j tu il elle on nous vous ils elles me m te t se s lui leur leurs eux mon ma mes ton
        ta tes son sa ses notre nos votre vos ce c cet cette ces ceci cela ça est sont était
        étaient été être a ont avait avaient avoir sera seront fait peut peuvent doit doivent
        dans en sur sous par pour avec sans chez vers entre depuis pendant avant après selon
        ne n y très plus aussi déjà tout tous toute toutes chaque comme quel quelle quels
        """
    ),
    negations=_words("pas jamais aucun aucune rien sans nul nulle personne"),
    light_words=_words("selon contexte document documents source sources indiqué mentionné"),
    exclusive=_words("seulement uniquement exclusivement"),
    number_words=_numbers(
        "deux=2 trois=3 quatre=4 cinq=5 six=6 sept=7 huit=8 neuf=9 dix=10 douze=12 vingt=20 "
        "trente=30 quarante=40 cinquante=50 soixante=60 quatre-vingt-dix=90 cent=100"
    ),
    antonym_pairs=_pairs(
        "augmente/diminue augmentation/diminution hausse/baisse plus/moins avant/après "
        "supérieur/inférieur maximum/minimum autorisé/interdit gratuit/payant "
        "possible/impossible premier/dernier première/dernière ouvert/fermé "
        "obligatoire/facultatif inclus/exclu public/privé valide/invalide"
    ),
    elisions=True,
)

SPANISH = Lexicon(
    code="es",
    synonyms=_synonyms(
        "pedir=solicitar reembolso=devolución=dinero después=posterior=posteriores "
        "comprar=compra=adquirir cliente=comprador dentro=hasta precio=costo=coste=tarifa "
        "tienda=local empezar=comenzar=iniciar terminar=finalizar=acabar"
    ),
    value_groups=_groups(
        "diario=diaria=diariamente semanal=semanalmente mensual=mensualmente "
        "trimestral=trimestralmente anual=anualmente",
        "lunes martes miércoles jueves viernes sábado domingo",
    ),
    conditions=_words("si para cuando salvo siempre"),
    stopwords=_words(
        """
        el la los las lo un una unos unas y o u pero si que quien quienes cual cuales cuyo
        donde cuando como yo tú él ella ello nosotros vosotros ellos ellas me te se nos os le
        les mi mis tu tus su sus nuestro nuestra este esta estos estas ese esa esos esas aquel
        es son era eran fue fueron ser sido está están estaba estar ha han había haber hay
        puede pueden debe deben de del al a en por para con entre sobre bajo desde hasta hacia
        durante tras según muy más también ya todo todos toda todas cada
        """
    ),
    negations=_words("no nunca jamás ningún ninguno ninguna nada sin tampoco"),
    light_words=_words("según contexto documento documentos fuente fuentes indicado"),
    exclusive=_words("solo sólo solamente únicamente exclusivamente"),
    number_words=_numbers(
        "dos=2 tres=3 cuatro=4 cinco=5 seis=6 siete=7 ocho=8 nueve=9 diez=10 doce=12 "
        "veinte=20 treinta=30 cuarenta=40 cincuenta=50 sesenta=60 noventa=90 cien=100"
    ),
    antonym_pairs=_pairs(
        "aumenta/disminuye aumento/disminución más/menos antes/después superior/inferior "
        "máximo/mínimo permitido/prohibido gratuito/pago gratis/pago posible/imposible "
        "primero/último primera/última abierto/cerrado obligatorio/opcional "
        "incluido/excluido público/privado válido/inválido"
    ),
)

PORTUGUESE = Lexicon(
    code="pt",
    value_groups=_groups(
        "diário=diária=diariamente semanal=semanalmente mensal=mensalmente "
        "trimestral=trimestralmente anual=anualmente",
    ),
    conditions=_words("se para quando salvo"),
    stopwords=_words(
        """
        o a os as um uma uns umas e ou mas se que quem qual quais cujo onde quando como eu tu
        ele ela nós vós eles elas me te lhe nos vos lhes meu minha meus minhas seu sua seus
        suas nosso nossa este esta estes estas esse essa esses essas aquele isto isso é são
        era eram foi foram ser sido está estão estava estar tem têm tinha ter há pode podem
        deve devem de do da dos das ao aos à às em no na nos nas por pelo pela para com entre
        sobre sob desde até durante após segundo muito mais também já todo todos toda todas
        cada
        """
    ),
    negations=_words("não nunca jamais nenhum nenhuma nada sem nem"),
    light_words=_words("segundo contexto documento documentos fonte fontes indicado"),
    exclusive=_words("apenas somente exclusivamente unicamente"),
    number_words=_numbers(
        "dois=2 duas=2 três=3 quatro=4 cinco=5 seis=6 sete=7 oito=8 nove=9 dez=10 doze=12 "
        "vinte=20 trinta=30 quarenta=40 cinquenta=50 sessenta=60 noventa=90 cem=100"
    ),
    antonym_pairs=_pairs(
        "aumenta/diminui aumento/redução mais/menos antes/depois superior/inferior "
        "máximo/mínimo permitido/proibido gratuito/pago possível/impossível primeiro/último "
        "primeira/última aberto/fechado obrigatório/opcional incluído/excluído "
        "público/privado válido/inválido"
    ),
)

ITALIAN = Lexicon(
    code="it",
    value_groups=_groups(
        "giornaliero=quotidiano=giornalmente settimanale=settimanalmente "
        "mensile=mensilmente trimestrale annuale=annualmente",
        "lunedì martedì mercoledì giovedì venerdì sabato domenica",
    ),
    conditions=_words("se per quando salvo"),
    stopwords=_words(
        """
        il lo la i gli le l un uno una un e ed o ma se che chi cui quale quali dove quando come
        io tu lui lei esso essa noi voi loro mi ti si ci vi gli ne mio mia miei mie tuo tua suo
        sua suoi sue nostro nostra questo questa questi queste quello quella è sono era erano
        fu stato stata essere ha hanno aveva avere può possono deve devono di del dello della
        dei degli delle a al allo alla ai agli alle da dal dalla in nel nello nella nei negli
        nelle su sul sulla per con tra fra dopo prima durante secondo molto più anche già
        tutto tutti tutta tutte ogni
        """
    ),
    negations=_words("non mai nessun nessuno nessuna niente nulla senza né"),
    light_words=_words("secondo contesto documento documenti fonte fonti indicato"),
    exclusive=_words("solo soltanto solamente unicamente esclusivamente"),
    number_words=_numbers(
        "due=2 tre=3 quattro=4 cinque=5 sei=6 sette=7 otto=8 nove=9 dieci=10 dodici=12 "
        "venti=20 trenta=30 quaranta=40 cinquanta=50 sessanta=60 novanta=90 cento=100"
    ),
    antonym_pairs=_pairs(
        "aumenta/diminuisce aumento/diminuzione più/meno prima/dopo superiore/inferiore "
        "massimo/minimo consentito/vietato permesso/vietato gratuito/pagamento "
        "possibile/impossibile primo/ultimo prima/ultima aperto/chiuso "
        "obbligatorio/facoltativo incluso/escluso pubblico/privato valido/non_valido"
    ),
    elisions=True,
)

DUTCH = Lexicon(
    code="nl",
    value_groups=_groups(
        "dagelijks wekelijks maandelijks driemaandelijks jaarlijks",
        "maandag dinsdag woensdag donderdag vrijdag zaterdag zondag",
    ),
    conditions=_words("als indien voor wanneer mits"),
    stopwords=_words(
        """
        de het een en of maar als dan dat die dit deze wie wat waar wanneer hoe ik jij je hij
        zij ze wij we jullie u mij me hem haar ons hun mijn jouw zijn haar onze is zijn was
        waren wordt worden werd werden geweest heeft hebben had hadden kan kunnen kon moet
        moeten mag mogen wil willen zal zullen van voor naar met bij in op aan uit door over
        onder tussen tot na sinds tijdens per om te ook nog al zeer erg meer alle elke ieder
        er hier daar
        """
    ),
    negations=_words("niet geen nooit niets zonder nergens niemand"),
    light_words=_words("volgens context document documenten bron bronnen vermeld"),
    exclusive=_words("alleen uitsluitend slechts enkel"),
    number_words=_numbers(
        "twee=2 drie=3 vier=4 vijf=5 zes=6 zeven=7 acht=8 negen=9 tien=10 twaalf=12 "
        "twintig=20 dertig=30 veertig=40 vijftig=50 zestig=60 negentig=90 honderd=100"
    ),
    antonym_pairs=_pairs(
        "verhoogd/verlaagd stijgt/daalt meer/minder voor/na hoger/lager maximaal/minimaal "
        "maximum/minimum toegestaan/verboden gratis/betaald mogelijk/onmogelijk "
        "eerste/laatste open/gesloten verplicht/optioneel inbegrepen/uitgesloten "
        "openbaar/privé geldig/ongeldig"
    ),
)

JAPANESE = Lexicon(
    code="ja",
    exclusive=_words("のみ だけ 限り"),
    conditions=_words("場合 なら ならば 限り 条件"),
    stopwords=_words("事 物 等 的 為 様 方 中 上 下 者 性"),
    negations=_words("ない ません なかった 不 未"),
    antonym_pairs=_pairs(
        "増加/減少 増え/減 以上/以下 最大/最小 以前/以後 前/後 無料/有料 許可/禁止 "
        "必須/任意 最初/最後 上限/下限 開始/終了 可能/不可 高/低 営業/定休 営業/休業 営業/休館"
    ),
    cjk=True,
    names=False,
    name_words=1,
)

CHINESE = Lexicon(
    code="zh",
    exclusive=_words("仅 只 唯"),
    conditions=_words("如果 若 对于 仅限 条件"),
    stopwords=_words("的 了 是 在 和 与 及 或 为 将 被 把 对 于 也 都 就 而 其 该 此 这 那 之"),
    negations=_words("不 没 没有 无 未 非 别"),
    antonym_pairs=_pairs(
        "增加/减少 提高/降低 以上/以下 最多/最少 最大/最小 之前/之后 前/后 免费/收费 "
        "允许/禁止 必须/可选 最高/最低 开始/结束 高/低 营业/休息 营业/休业 营业/关门 开放/关闭"
    ),
    cjk=True,
    names=False,
    name_words=1,
)

KOREAN = Lexicon(
    code="ko",
    exclusive=_words("만 오직 뿐"),
    conditions=_words("경우 조건 때"),
    stopwords=_words("수 것 등 및 또는 그 이 저 때 더"),
    negations=_words("않 없 못 안 아니"),
    antonym_pairs=_pairs(
        "증가/감소 이상/이하 최대/최소 이전/이후 전/후 무료/유료 허용/금지 필수/선택 "
        "처음/마지막 시작/종료 높/낮 가능/불가능 영업/휴무 영업/휴업 영업/휴일"
    ),
    cjk=True,
    names=False,
    name_words=1,
)

CJK = frozenset({"ja", "zh", "ko"})
# A negation is never a content word; English's stopwords already hold its negations.
_LEXICONS = {
    lexicon.code: lexicon
    if lexicon is ENGLISH
    else replace(lexicon, stopwords=lexicon.stopwords | lexicon.negations)
    for lexicon in (
        ENGLISH,
        GERMAN,
        FRENCH,
        SPANISH,
        PORTUGUESE,
        ITALIAN,
        DUTCH,
        JAPANESE,
        CHINESE,
        KOREAN,
    )
}
SUPPORTED: tuple[str, ...] = tuple(_LEXICONS)
"""The languages the offline judge reads, as ISO 639-1 codes."""

_CURRENT: ContextVar[Lexicon] = ContextVar("vera_offline_lexicon", default=ENGLISH)


def lexicon_for(code: str) -> Lexicon | None:
    """The lexicon of `code` ("de"), or None for a language the offline judge cannot read."""
    return _LEXICONS.get(code)


def lexicons() -> tuple[Lexicon, ...]:
    """Every lexicon, English first."""
    return tuple(_LEXICONS.values())


def current_lexicon() -> Lexicon:
    """The lexicon of the sample being read: English unless `reading` says otherwise."""
    return _CURRENT.get()


@contextmanager
def reading(lexicon: Lexicon) -> Iterator[None]:
    """Read text with `lexicon` inside the block."""
    token = _CURRENT.set(lexicon)
    try:
        yield
    finally:
        _CURRENT.reset(token)
