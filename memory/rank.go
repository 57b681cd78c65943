package memory

// jarvis_rank is FTS5's BM25 (same k1, b and idf as its built-in bm25())
// without the one costly step: bm25() reads every matching row's token count
// from the index's docsize table, a B-tree lookup per row that is most of a
// search's time (measured on 10,000 notes: 193 µs of ranking at the median
// with it, 28 µs without). Here the count comes with the row: a chunk's id
// carries it in its low 8 bits (lengthCode, set when the chunk is indexed).
// And the idf needs each query word's count of matching chunks: FTS5 counts
// them by reading the word's whole list of matches (xQueryPhrase), which for
// two common words over 10,000 notes was about 9 ms of a 21 ms search. The
// index keeps each token's count instead (chunk_terms, counted with
// jarvis_terms below, terms.go), and a whole word of one
// token reads its count there; a prefix or a phrase of several words is
// still counted. A one-word query skips the idf, a constant factor that
// cannot change the order.
//
// The function is registered on every SQLite connection the process opens
// (sqlite3_auto_extension), through FTS5's documented extension API.
// mattn/go-sqlite3 compiles SQLite into the binary with its symbols
// visible, which is what the declarations below link to.

/*
#cgo !windows LDFLAGS: -lm
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef long long i64;
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef struct sqlite3_context sqlite3_context;
typedef struct sqlite3_value sqlite3_value;
typedef struct Fts5Context Fts5Context;
typedef struct Fts5ExtensionApi Fts5ExtensionApi;

// The members of FTS5's public Fts5ExtensionApi, in their order, up to the
// last one used here (fts5.h, SQLite 3.x; iVersion >= 2 has them all).
struct Fts5ExtensionApi {
	int iVersion;
	void *(*xUserData)(Fts5Context*);
	int (*xColumnCount)(Fts5Context*);
	int (*xRowCount)(Fts5Context*, i64 *pnRow);
	int (*xColumnTotalSize)(Fts5Context*, int iCol, i64 *pnToken);
	void *xTokenize;
	int (*xPhraseCount)(Fts5Context*);
	int (*xPhraseSize)(Fts5Context*, int iPhrase);
	int (*xInstCount)(Fts5Context*, int *pnInst);
	int (*xInst)(Fts5Context*, int iIdx, int *piPhrase, int *piCol, int *piOff);
	i64 (*xRowid)(Fts5Context*);
	void *xColumnText;
	void *xColumnSize;
	int (*xQueryPhrase)(Fts5Context*, int iPhrase, void *pUserData, int (*)(const Fts5ExtensionApi*, Fts5Context*, void*));
	int (*xSetAuxdata)(Fts5Context*, void *pAux, void (*xDelete)(void*));
	void *(*xGetAuxdata)(Fts5Context*, int bClear);
	void *xPhraseFirst;
	void *xPhraseNext;
	void *xPhraseFirstColumn;
	void *xPhraseNextColumn;
	// iVersion >= 3
	int (*xQueryToken)(Fts5Context*, int iPhrase, int iToken, const char **ppToken, int *pnToken);
};

typedef struct Fts5Tokenizer Fts5Tokenizer;
typedef struct fts5_tokenizer {
	int (*xCreate)(void*, const char **azArg, int nArg, Fts5Tokenizer **ppOut);
	void (*xDelete)(Fts5Tokenizer*);
	int (*xTokenize)(Fts5Tokenizer*, void *pCtx, int flags, const char *pText, int nText,
		int (*xToken)(void *pCtx, int tflags, const char *pToken, int nToken, int iStart, int iEnd));
} fts5_tokenizer;
#define FTS5_TOKENIZE_DOCUMENT 0x0004

typedef void (*fts5_extension_function)(const Fts5ExtensionApi*, Fts5Context*, sqlite3_context*, int, sqlite3_value**);

typedef struct fts5_api fts5_api;
struct fts5_api {
	int iVersion;
	void *xCreateTokenizer;
	int (*xFindTokenizer)(fts5_api*, const char *zName, void **ppUserData, fts5_tokenizer *pTokenizer);
	int (*xCreateFunction)(fts5_api*, const char *zName, void *pUserData, fts5_extension_function xFunction, void (*xDestroy)(void*));
};

int sqlite3_prepare_v2(sqlite3*, const char*, int, sqlite3_stmt**, const char**);
int sqlite3_bind_pointer(sqlite3_stmt*, int, void*, const char*, void (*)(void*));
int sqlite3_step(sqlite3_stmt*);
int sqlite3_finalize(sqlite3_stmt*);
int sqlite3_reset(sqlite3_stmt*);
void sqlite3_result_double(sqlite3_context*, double);
void sqlite3_result_error_code(sqlite3_context*, int);
void *sqlite3_malloc64(unsigned long long);
void sqlite3_free(void*);
int sqlite3_auto_extension(void (*)(void));
int sqlite3_compileoption_used(const char*);
sqlite3 *sqlite3_context_db_handle(sqlite3_context*);
int sqlite3_bind_text(sqlite3_stmt*, int, const char*, int, void (*)(void*));
i64 sqlite3_column_int64(sqlite3_stmt*, int);
const unsigned char *sqlite3_value_text(sqlite3_value*);
int sqlite3_value_bytes(sqlite3_value*);
void *sqlite3_user_data(sqlite3_context*);
void sqlite3_result_text(sqlite3_context*, const char*, int, void (*)(void*));
void sqlite3_result_error(sqlite3_context*, const char*, int);
void *sqlite3_realloc64(void*, unsigned long long);
int sqlite3_create_function_v2(sqlite3*, const char*, int, int, void*,
	void (*)(sqlite3_context*, int, sqlite3_value**), void (*)(sqlite3_context*, int, sqlite3_value**),
	void (*)(sqlite3_context*), void (*)(void*));
#define SQLITE_ROW 100
#define SQLITE_UTF8 1
#define SQLITE_DETERMINISTIC 0x000000800
#define SQLITE_TRANSIENT ((void (*)(void*))-1)

typedef struct {
	int nPhrase;
	int nGroup;   // distinct groups >= 0 (0: no coverage factor)
	double cover; // coverage weight
	double avgdl;
	double *idf;  // per phrase
	double *freq; // per phrase, for the current row
	double *w;    // per phrase weight
	int *g;       // per phrase group, -1 for none
	int *exact;   // per phrase: a whole word (not a prefix), its count may come from chunk_terms
	int *seen;    // per group, for the current row
} jrank_data;

double sqlite3_value_double(sqlite3_value*);
int sqlite3_value_int(sqlite3_value*);

static int jrank_count(const Fts5ExtensionApi *api, Fts5Context *fts, void *p) {
	(*(i64 *)p)++;
	return 0;
}

// The inverse of lengthCode in rank.go.
static double jrank_length(i64 rowid) {
	int c = (int)(rowid & 0xff);
	return c < 128 ? (double)c : 128.0 + (c - 128) * 16.0 + 8.0;
}

// jrank_docs returns how many rows hold phrase i, a single token, from the
// chunk_terms table the index keeps (index.go), or -1 when that is not
// known (another phrase, no such table): the caller then reads the
// phrase's whole doclist (xQueryPhrase), which at thousands of matches per
// common word was the larger part of a search. *st is the lookup,
// prepared at the first call.
static i64 jrank_docs(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int i, sqlite3_stmt **st, int *tried) {
	const char *tok = 0;
	int ntok = 0;
	if (api->iVersion < 3 || api->xPhraseSize(fts, i) != 1) return -1;
	if (!*tried) {
		*tried = 1;
		if (sqlite3_prepare_v2(sqlite3_context_db_handle(ctx), "SELECT docs FROM chunk_terms WHERE term = ?1", -1, st, 0) != 0) *st = 0;
	}
	if (*st == 0 || api->xQueryToken(fts, i, 0, &tok, &ntok) != 0) return -1;
	sqlite3_reset(*st);
	if (sqlite3_bind_text(*st, 1, tok, ntok, SQLITE_TRANSIENT) != 0) return -1;
	int rc = sqlite3_step(*st);
	if (rc == SQLITE_ROW) return sqlite3_column_int64(*st, 0);
	return rc == 101 ? 0 : -1; // SQLITE_DONE: no row holds it
}

static void jrank(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nVal, sqlite3_value **apVal) {
	const double k1 = 1.2, b = 0.75;
	jrank_data *d = (jrank_data *)api->xGetAuxdata(fts, 0);
	int rc = 0;
	if (d == 0) {
		int n = api->xPhraseCount(fts);
		d = (jrank_data *)sqlite3_malloc64(sizeof(jrank_data) + 3 * (unsigned long long)n * sizeof(double) + 3 * (unsigned long long)n * sizeof(int));
		if (d == 0) {
			sqlite3_result_error_code(ctx, 7); // SQLITE_NOMEM
			return;
		}
		d->nPhrase = n;
		d->idf = (double *)&d[1];
		d->freq = d->idf + n;
		d->w = d->freq + n;
		d->g = (int *)(d->w + n);
		d->exact = d->g + n;
		d->seen = d->exact + n;
		d->nGroup = 0;
		d->cover = 0.0;
		for (int i = 0; i < n; i++) {
			d->w[i] = 1.0;
			d->g[i] = -1;
			d->exact[i] = 0;
		}
		// jarvis_rank(fts, cover, w0, g0, x0, w1, g1, x1, ...): a weight, a
		// group and whether it is a whole word per phrase, in query order
		// (search.go); jarvis_rank(fts, cover, w0, g0, ...) without the
		// third.
		int per = nVal == 1 + 3 * n ? 3 : nVal == 1 + 2 * n ? 2 : 0;
		if (per > 0) {
			d->cover = sqlite3_value_double(apVal[0]);
			for (int i = 0; i < n; i++) {
				d->w[i] = sqlite3_value_double(apVal[1 + per * i]);
				d->g[i] = sqlite3_value_int(apVal[2 + per * i]);
				if (per == 3) d->exact[i] = sqlite3_value_int(apVal[3 + per * i]) != 0;
				if (d->g[i] >= n) d->g[i] = -1;
				if (d->g[i] + 1 > d->nGroup) d->nGroup = d->g[i] + 1;
			}
		}
		i64 nRow = 0, nTok = 0;
		rc = api->xRowCount(fts, &nRow);
		if (rc == 0) rc = api->xColumnTotalSize(fts, -1, &nTok);
		d->avgdl = (nRow > 0 && nTok > 0) ? (double)nTok / (double)nRow : 1.0;
		sqlite3_stmt *docs = 0;
		int docsTried = 0;
		for (int i = 0; rc == 0 && i < n; i++) {
			if (n == 1) {
				d->idf[i] = 1.0;
				break;
			}
			i64 hits = -1;
			if (d->exact[i]) hits = jrank_docs(api, fts, ctx, i, &docs, &docsTried);
			if (hits < 0) {
				hits = 0;
				rc = api->xQueryPhrase(fts, i, &hits, jrank_count);
			}
			double idf = log(((double)nRow - (double)hits + 0.5) / ((double)hits + 0.5));
			d->idf[i] = idf <= 0.0 ? 1e-6 : idf;
		}
		if (docs != 0) sqlite3_finalize(docs);
		if (rc == 0) rc = api->xSetAuxdata(fts, d, sqlite3_free);
		else sqlite3_free(d);
		if (rc != 0) {
			sqlite3_result_error_code(ctx, rc);
			return;
		}
	}
	memset(d->freq, 0, sizeof(double) * d->nPhrase);
	int nInst = 0;
	rc = api->xInstCount(fts, &nInst);
	for (int i = 0; rc == 0 && i < nInst; i++) {
		int ip, ic, io;
		rc = api->xInst(fts, i, &ip, &ic, &io);
		if (rc == 0 && ip >= 0 && ip < d->nPhrase) d->freq[ip] += 1.0;
	}
	if (rc != 0) {
		sqlite3_result_error_code(ctx, rc);
		return;
	}
	double len = jrank_length(api->xRowid(fts)), score = 0.0;
	if (d->nGroup > 0) memset(d->seen, 0, sizeof(int) * d->nGroup);
	int covered = 0;
	for (int i = 0; i < d->nPhrase; i++) {
		double f = d->freq[i];
		score += d->w[i] * d->idf[i] * (f * (k1 + 1.0)) / (f + k1 * (1.0 - b + b * len / d->avgdl));
		if (f > 0.0 && d->g[i] >= 0 && !d->seen[d->g[i]]) {
			d->seen[d->g[i]] = 1;
			covered++;
		}
	}
	// More of the query's words (any of each word's forms) beats more
	// occurrences of a few of them.
	if (d->nGroup > 0) score *= 1.0 + d->cover * (double)covered / (double)d->nGroup;
	sqlite3_result_double(ctx, -score); // like bm25(): lower is better
}

// jarvis_terms(text) is the JSON array of the distinct tokens FTS5 makes
// of text for the index (chunks_fts's tokenizer, index.go: the two must
// name the same tokenizer), sorted: what terms.go counts chunk_terms with.
typedef struct {
	fts5_tokenizer t;
	Fts5Tokenizer *tok;
} jterms_tok;

typedef struct {
	char *buf;
	i64 nbuf, cap;
	i64 *off;
	int *len;
	int n, capn;
	int oom;
} jterms_acc;

typedef struct {
	const char *p;
	int n;
} jterms_ent;

static int jterms_token(void *pCtx, int tflags, const char *tok, int ntok, int iStart, int iEnd) {
	jterms_acc *a = (jterms_acc *)pCtx;
	if (a->nbuf + ntok > a->cap) {
		i64 cap = a->cap * 2 + ntok + 256;
		char *b = (char *)sqlite3_realloc64(a->buf, cap);
		if (b == 0) return 7; // SQLITE_NOMEM
		a->buf = b;
		a->cap = cap;
	}
	if (a->n == a->capn) {
		int capn = a->capn * 2 + 64;
		i64 *off = (i64 *)sqlite3_realloc64(a->off, (unsigned long long)capn * sizeof(i64));
		if (off == 0) return 7;
		a->off = off;
		int *len = (int *)sqlite3_realloc64(a->len, (unsigned long long)capn * sizeof(int));
		if (len == 0) return 7;
		a->len = len;
		a->capn = capn;
	}
	memcpy(a->buf + a->nbuf, tok, ntok);
	a->off[a->n] = a->nbuf;
	a->len[a->n] = ntok;
	a->n++;
	a->nbuf += ntok;
	return 0;
}

static int jterms_cmp(const void *x, const void *y) {
	const jterms_ent *a = (const jterms_ent *)x, *b = (const jterms_ent *)y;
	int c = memcmp(a->p, b->p, a->n < b->n ? a->n : b->n);
	return c != 0 ? c : a->n - b->n;
}

static void jterms(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
	jterms_tok *jt = (jterms_tok *)sqlite3_user_data(ctx);
	const char *text = (const char *)sqlite3_value_text(argv[0]);
	int ntext = sqlite3_value_bytes(argv[0]);
	jterms_acc a;
	memset(&a, 0, sizeof a);
	int rc = text == 0 ? 0 : jt->t.xTokenize(jt->tok, &a, FTS5_TOKENIZE_DOCUMENT, text, ntext, jterms_token);
	jterms_ent *e = 0;
	char *out = 0;
	if (rc == 0 && a.n > 0) {
		e = (jterms_ent *)sqlite3_malloc64((unsigned long long)a.n * sizeof(jterms_ent));
		if (e == 0) rc = 7;
	}
	if (rc == 0) {
		for (int i = 0; i < a.n; i++) {
			e[i].p = a.buf + a.off[i];
			e[i].n = a.len[i];
		}
		if (a.n > 1) qsort(e, a.n, sizeof(jterms_ent), jterms_cmp);
		out = (char *)sqlite3_malloc64(2 + (unsigned long long)a.nbuf * 6 + 3 * (unsigned long long)a.n);
		if (out == 0) rc = 7;
	}
	if (rc == 0) {
		static const char hex[] = "0123456789abcdef";
		i64 o = 0;
		int first = 1;
		out[o++] = '[';
		for (int i = 0; i < a.n; i++) {
			if (i > 0 && jterms_cmp(&e[i], &e[i - 1]) == 0) continue;
			if (!first) out[o++] = ',';
			first = 0;
			out[o++] = '"';
			for (int k = 0; k < e[i].n; k++) {
				unsigned char c = (unsigned char)e[i].p[k];
				if (c == '"' || c == '\\') {
					out[o++] = '\\';
					out[o++] = (char)c;
				} else if (c < 0x20) {
					out[o++] = '\\'; out[o++] = 'u'; out[o++] = '0'; out[o++] = '0';
					out[o++] = hex[c >> 4]; out[o++] = hex[c & 15];
				} else {
					out[o++] = (char)c;
				}
			}
			out[o++] = '"';
		}
		out[o++] = ']';
		sqlite3_result_text(ctx, out, (int)o, SQLITE_TRANSIENT);
	} else {
		sqlite3_result_error_code(ctx, rc);
	}
	sqlite3_free(out);
	sqlite3_free(e);
	sqlite3_free(a.buf);
	sqlite3_free(a.off);
	sqlite3_free(a.len);
}

static void jterms_free(void *p) {
	jterms_tok *jt = (jterms_tok *)p;
	if (jt->tok != 0) jt->t.xDelete(jt->tok);
	sqlite3_free(jt);
}

// jterms_register adds jarvis_terms to db, with its own instance of the
// index's tokenizer; without it writes to the index fail.
static void jterms_register(sqlite3 *db, fts5_api *api) {
	jterms_tok *jt = (jterms_tok *)sqlite3_malloc64(sizeof(jterms_tok));
	void *ud = 0;
	if (jt == 0) return;
	memset(jt, 0, sizeof *jt);
	const char *args[] = {"unicode61", "remove_diacritics", "2"};
	if (api->xFindTokenizer(api, "porter", &ud, &jt->t) != 0 || jt->t.xCreate(ud, args, 3, &jt->tok) != 0) {
		sqlite3_free(jt);
		return;
	}
	// On failure it calls jterms_free itself.
	sqlite3_create_function_v2(db, "jarvis_terms", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, jt, jterms, 0, 0, jterms_free);
}

// Registers jarvis_rank on a new connection; a connection without FTS5 (or
// where this fails) simply lacks the function.
static int jrank_init(sqlite3 *db, char **pzErrMsg, const void *pApi) {
	fts5_api *api = 0;
	sqlite3_stmt *st = 0;
	// Without FTS5 the query below would fail and leave its error on the
	// connection, which would then fail to open.
	if (!sqlite3_compileoption_used("ENABLE_FTS5")) return 0;
	if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, 0) != 0) return 0;
	if (sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", 0) == 0) sqlite3_step(st);
	sqlite3_finalize(st);
	if (api != 0 && api->iVersion >= 2) {
		api->xCreateFunction(api, "jarvis_rank", 0, jrank, 0);
		jterms_register(db, api);
	}
	return 0;
}

static int jrank_register(void) {
	return sqlite3_auto_extension((void (*)(void))jrank_init);
}
*/
import "C"

import (
	"fmt"
	"unicode"
)

func init() {
	if rc := C.jrank_register(); rc != 0 {
		panic(fmt.Sprintf("memory: registering jarvis_rank with SQLite failed (code %d)", rc))
	}
}

// lengthCode is a chunk's token count in 8 bits: exact below 128, then in
// steps of 16 up to 2,160 (chunks hold at most maxChunkBytes).
func lengthCode(tokens int) int64 {
	if tokens < 128 {
		return int64(tokens)
	}
	return int64(min(255, 128+(tokens-128)/16))
}

// tokenCount counts the tokens FTS5's unicode61 tokenizer makes of s: runs
// of letters, digits and private-use characters.
func tokenCount(s string) int {
	n, in := 0, false
	for _, r := range s {
		tok := unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
		if tok && !in {
			n++
		}
		in = tok
	}
	return n
}
