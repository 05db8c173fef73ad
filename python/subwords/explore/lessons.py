"""What each widget is for, in our own words: where it sits on its page, what the page asks
there, what to try, and what to notice. Shown above every widget's controls.

The pages have no section titles, so a widget is placed by the passage it follows. Where a
widget runs on the stand-in corpus (the pages' eighteen sentences are not printed), "notice"
says which of the page's conclusions to look for and that the numbers are the stand-in's.
"""

from __future__ import annotations

PAGE_NAMES = {"bpe": "BPE page", "unigram": "Unigram page", "wordpiece": "WordPiece page",
              "sentencepiece": "SentencePiece page"}

# widget id -> (after which passage of its page, asks, try, notice)
LESSONS: dict[str, tuple[str, str, str, str]] = {
    "bpe-walk": (
        "the merge loop on the four words (low, lower, newest, widest)",
        "What does repeatedly joining the commonest adjacent pair do to the words and to the corpus's length?",
        "Drag the merges from 0 to 10, one step at a time, and read each word's spelling.",
        "Each merge's count is exactly the number of pieces it removes from the corpus; est</w> forms "
        "first and is shared by newest and widest; after ten merges every word is one piece."),
    "bpe-fit": (
        "the fit on the larger corpus and the sentence it never saw",
        "How does a vocabulary fitted to exhaustion cut words the corpus never held?",
        "Read the six readings: a word alone against the same word inside the sentence. Type a name of your own.",
        "A word can be one piece alone and several in the sentence, because a row carries the end-of-word "
        "marker and a full stop or hyphen stops that row from applying."),
    "bpe-fallback": (
        "byte fallback: 256 byte rows under the alphabet",
        "What does a vocabulary do with a character it has no row for, with and without byte rows?",
        "Switch byte fallback off and on; type café or a line in another script.",
        "Without fallback an unknown character becomes [UNK] and is lost when glued back; with it the "
        "character is written as its UTF-8 bytes and comes back exactly. The table grows by 257 rows "
        "whatever size was asked."),
    "bpe-curve": (
        "the vocabulary size as a dial, measured at fifteen sizes",
        "How do the corpus and a held-out sentence shorten as the table grows?",
        "Move the size shown along the curve and compare the two charts.",
        "Both curves fall steeply and then flatten: each merge saves no more than the one before. The "
        "held-out sentence gains far less than the corpus the table was fitted to."),
    "bpe-bytes": (
        "character merges with byte fallback against merges over bytes",
        "Is it better to merge characters (bytes only as a fallback) or bytes from the start?",
        "Change the number of merges; type accented or non-Latin text and tick 'bytes as hex'.",
        "The byte fit spends its first merges rebuilding letters, so on English it is longer for the same "
        "number of merges; both glue every text back exactly. Its pieces are bytes, drawn with GPT-2's "
        "stand-in characters (Ġ is the space byte): the hex toggle shows the bytes themselves."),
    "bpe-two-stage": (
        "a second stage that may merge across spaces",
        "What does lifting the word boundary after a first stage learn, and does SuperBPE's recipe learn the same?",
        "Change the stage-one size and the rows left for stage two; switch the recipe to SuperBPE and back; "
        "choose a larger corpus.",
        "On four repeated words there are no phrases to find: stage two joins a word to itself, and not "
        "every stage-two row spans a space (permitted, not required). SuperBPE, asked for the same merges, "
        "learns the same superwords here with a space in front (Ġ), but spends its merges on bytes: more "
        "pieces on the corpus and on your text. On a larger corpus its superwords are phrases such as "
        "' of the'."),
    "bpe-joints": (
        "joints: cutting words at morpheme boundaries before counting",
        "What does forbidding merges across un|do, re|tie cost?",
        "Change the rows asked and the word.",
        "With joints the fit stops early (15 rows) and the corpus doubles in length (80 pieces against 40): "
        "the price of pieces that respect morphology."),
    "bpe-ties": (
        "ties between pairs with equal counts, and greedy against the best possible",
        "Does the tie-break change the outcome, and how far is greedy merging from optimal?",
        "Pick the other branch at merge 1 or merge 4; raise the merges on report/taste/state.",
        "Either branch ends at 22 pieces with nine of ten rows shared; greedy merging on report/taste/state "
        "is beaten by a better order (74 against 66 after two merges)."),
    "uni-spellings": (
        "every spelling of a word the four words never contain",
        "How does a unigram model share a word among all its spellings?",
        "Choose another word.",
        "lowest has 28 spellings; the likeliest takes under half, two are tied exactly, and the cut BPE "
        "would make is only fourth."),
    "uni-lattice": (
        "the lattice: positions between symbols and the pieces spanning them",
        "How can every spelling be scored without listing them?",
        "Choose a word; hover an arc for its piece and log probability.",
        "Spellings are walks from the first position to the last; 17 arcs give 28 walks for lowest, and the "
        "best walk (thick) is found without enumerating them."),
    "uni-em": (
        "expectation-maximisation, one round at a time",
        "What does re-estimating the pieces' probabilities from their expected counts do?",
        "Step the rounds on ab, then on the four words.",
        "Whole words gain and fragments starve: ab goes 0.6 then 0.882; lo almost vanishes by round 2. The "
        "best spelling's score falls as the table sharpens."),
    "uni-losses": (
        "pricing each piece by the likelihood lost without it",
        "Which pieces does the corpus actually need?",
        "Change the EM rounds before pricing; list the zero-loss pieces.",
        "Four pieces (the four words) carry the whole corpus; 34 of 38 cost exactly nothing to drop."),
    "uni-rounds": (
        "pruning in rounds rather than one piece at a time",
        "How fast does the table shrink to the size asked?",
        "Change the rows asked and the share kept per round.",
        "The fall is geometric (49, 36, 27, 20, 15 at three quarters) until the last round lands on the size."),
    "uni-vs-bpe": (
        "merging against shrinking at matched sizes",
        "At the same vocabulary size, which method reads the corpus and a new sentence in fewer pieces?",
        "Switch between the corpus and the held-out sentence; on a large corpus of yours lower the largest size.",
        "On its own corpus the page finds Unigram far shorter at every size, down to one piece per word at "
        "the top, and longer on the held-out sentence. The box above the chart says whether that holds on the "
        "corpus shown, and at which sizes it does not."),
    "uni-pieces": (
        "the two vocabularies' pieces side by side",
        "What kinds of mistake does each method make on a sentence it never saw?",
        "Move between the smallest, a middle and the largest size; type your own text.",
        "At the smallest size both spell letter by letter; as the size grows Unigram keeps whole corpus words "
        "while BPE keeps frequent fragments."),
    "wp-scatter": (
        "the count of a pair against its score",
        "Do the commonest pairs and the best-scoring pairs agree?",
        "List by count, then by score; choose the larger corpus (log scales).",
        "They do not: the commonest pair ranks low by score, and the top score goes to a rare pair whose "
        "halves occur only together."),
    "wp-scores": (
        "the score worked by hand on the four words",
        "What is score(a, b) = count(a, b) / (count(a) × count(b)), pair by pair?",
        "Order by score, then by count.",
        "e + s is commonest but scores 1/17; i + d occurs 3 times and scores 1/3. The total gain favours s + t."),
    "wp-runs": (
        "the count rule and the score rule run side by side",
        "Where do the two rules part, and what does a minimum count do?",
        "Step the merges; try the minimum count as a filter and as a stop.",
        "They part at the first merge (e + s against i + d). A minimum of 3 that tests the winner stops at "
        "five merges; the same minimum as a filter learns all ten."),
    "wp-sizes": (
        "the sentence at four vocabulary sizes, marks shown",
        "Can the word boundaries be read from the pieces alone?",
        "Turn the mark highlight off and on; type your own text.",
        "Exactly one piece per word has no ## mark, and it is always the first."),
    "wp-open-end": (
        "characters that never open a word, and never end one",
        "Does it matter whether continuations or word ends are marked?",
        "Choose Alvarez, zebra and you under both marks.",
        "Marking continuations needs the first letter seen at a word start; marking ends needs the last seen "
        "at a word end. Alvarez passes one and fails the other; zebra the reverse; you fails both."),
    "wp-lengths": (
        "corpus length per merge budget under both rules",
        "What does choosing pairs by score cost in length?",
        "Move the budget shown; choose the larger corpus.",
        "The score rule's line lies above the count rule's at every budget: buying rare pairs saves fewer "
        "pieces per merge."),
    "sp-stream": (
        "the text as one stream of symbols with ▁ for each space",
        "What is the text once spaces become marks?",
        "Choose the examples; type text with two spaces or none.",
        "The sentence's 51 characters become 52 symbols (six marks for six spaces, one in front); cut at the "
        "marks, seven units."),
    "sp-walk": (
        "the merge loop with the mark at the front",
        "When does the mark join its word?",
        "Drag the merges and watch the tied candidates column.",
        "A ▁ pair is often among the tied but is taken late: ▁ sorts after every letter, so the tie rule "
        "prefers letters."),
    "sp-extends": (
        "merges that extend a piece beginning with ▁",
        "How much of the table is about where words start?",
        "Change the rows asked; type your own text.",
        "Nearly half the merges extend a ▁ piece, and many rows exist twice, with and without the mark."),
    "sp-roundtrip": (
        "the round trip: glue the pieces back",
        "Does the text come back exactly under a front mark and under an end mark?",
        "Change the size; type a word ending in a letter the corpus never ends a word with.",
        "The front mark returns the sentence exactly; the end mark loses the space after Alvarez along "
        "with the [UNK] that replaced its last letter."),
    "sp-normalize": (
        "the three normalisations made on the way in",
        "What does 'exact round trip' leave unsaid?",
        "Choose each input.",
        "Runs of whitespace become one space, spaces at the ends are dropped, and a ▁ typed in the text comes "
        "back as a space."),
    "sp-lengths": (
        "front against end marks at fourteen sizes",
        "What does the exact round trip cost in pieces?",
        "Switch between the corpus and the held-out sentence.",
        "The page finds the front mark shorter at every size from 52 rows up. The box above the chart says "
        "whether that holds on the corpus shown, and at which sizes it does not."),
    "sp-cjk": (
        "text without spaces: the case the front mark is for",
        "How do the two schemes fare when a line is one long 'word'?",
        "Change the rows asked; type a CJK line.",
        "The end-marked scheme sees five long words with little to merge; the front scheme finds the shared "
        "words across lines and reads the new sentence in whole words."),
    "sp-no-cut": (
        "merging without cutting at the marks",
        "What happens if pieces may cross spaces?",
        "Change the merges; type your own text.",
        "Pieces grow a space in the middle or at the end (e then a space, the with spaces around it)."),
    "sp-mark": (
        "the mark's code point",
        "Is the choice of mark character neutral?",
        "Choose _, ~ or |.",
        "No: the tie rule sorts by code point, so a mark that sorts before the letters (_) is merged earlier "
        "than ▁ and the two tables differ in nine rows."),
}

#: Names the library reports, in words (sp-normalize's "reported by training" column).
NORMALIZATIONS = {"whitespace_runs": "runs of whitespace became one space",
                  "stripped_ends": "whitespace at the ends dropped",
                  "mark_in_text": "a ▁ in the text became a space"}


def lesson(widget_id: str, page: str, number: int, of: int) -> dict[str, str]:
    after, asks, try_, notice = LESSONS[widget_id]
    return {"where": f"{PAGE_NAMES[page]}, widget {number} of {of}: after the passage on {after}.",
            "asks": asks, "try": try_, "notice": notice}
