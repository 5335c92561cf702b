#!/usr/bin/env python3
"""Writes the inputs of the validator's corpus: session.jsonl and case.json of every case.

Each case is one line below (name, the codes it must produce, the bytes, what it shows). The
expected outputs are not written here: `expected.json` is the validator's report, reviewed and
blessed with `cargo xtask bless validate`, and
`pi.json` is what the pinned pi did with the file (`cargo xtask conformance validate-reference`).
Run: python3 conformance/validate/make_cases.py
"""
import json, os, shutil
ROOT=os.path.dirname(os.path.abspath(__file__))
def d(o): return json.dumps(o, separators=(',',':'), ensure_ascii=False)
SID="019a0000-0000-7000-8000-000000000001"
TS="2026-01-01T10:00:00.000Z"
def H(**kw):
    h={"type":"session","version":3,"id":SID,"timestamp":TS,"cwd":"/home/u/proj"}
    for k,v in kw.items():
        if v is None: h.pop(k,None)
        else: h[k]=v
    return h
def ts(n): return "2026-01-01T10:00:%02d.000Z"%n
def U(i,p,text="Hi",n=1):
    return {"type":"message","id":i,"parentId":p,"timestamp":ts(n),"message":{"role":"user","content":[{"type":"text","text":text}],"timestamp":1767261600000+n*1000}}
USAGE={"input":10,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":12,"cost":{"input":0.003,"output":0.0006,"cacheRead":0,"cacheWrite":0,"total":0.0036}}
def A(i,p,n=2,content=None,usage=None):
    return {"type":"message","id":i,"parentId":p,"timestamp":ts(n),"message":{"role":"assistant","content":content or [{"type":"text","text":"Hello"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":usage or USAGE,"stopReason":"stop","timestamp":1767261600000+n*1000}}
def TR(i,p,call,n=4):
    return {"type":"message","id":i,"parentId":p,"timestamp":ts(n),"message":{"role":"toolResult","toolCallId":call,"toolName":"ls","content":[{"type":"text","text":"a.txt"}],"isError":False,"timestamp":1767261600000+n*1000}}
CALL=[{"type":"toolCall","id":"toolu_01","name":"ls","arguments":{"path":"."}}]
def lines(*objs, end="\n"):
    return ("\n".join(o if isinstance(o,str) else d(o) for o in objs)+end).encode()
cases=[]
def case(name, codes, data, desc, **meta):
    cases.append((name,codes,data,desc,meta))
B=lambda: (U("a1b2c3d4",None), A("b2c3d4e5","a1b2c3d4"))
u,a=B()
# valid
case("valid-minimal",[],lines(H(),u,a),"A header, a user message and the assistant's reply: nothing to report.")
full=[H(),
 {"type":"model_change","id":"0a000001","parentId":None,"timestamp":ts(0),"provider":"anthropic","modelId":"claude-sonnet-4-5"},
 {"type":"thinking_level_change","id":"0a000002","parentId":"0a000001","timestamp":ts(0),"thinkingLevel":"off"},
 U("0a000003","0a000002",n=1), A("0a000004","0a000003",n=2,content=CALL), TR("0a000005","0a000004","toolu_01",n=3),
 A("0a000006","0a000005",n=4),
 {"type":"compaction","id":"0a000007","parentId":"0a000006","timestamp":ts(5),"summary":"Listed files.","firstKeptEntryId":"0a000003","tokensBefore":1200,"details":{"readFiles":[],"modifiedFiles":[]}},
 {"type":"branch_summary","id":"0a000008","parentId":"0a000007","timestamp":ts(6),"fromId":"0a000007","summary":"Tried another way."},
 {"type":"custom","customType":"my-ext","data":{"k":1},"id":"0a000009","parentId":"0a000008","timestamp":ts(7)},
 {"type":"custom_message","customType":"my-ext","content":"Note","display":True,"id":"0a00000a","parentId":"0a000009","timestamp":ts(8)},
 {"type":"label","id":"0a00000b","parentId":"0a00000a","timestamp":ts(9),"targetId":"0a000003","label":"start"},
 {"type":"session_info","id":"0a00000c","parentId":"0a00000b","timestamp":ts(10),"name":"Listing files"},
 {"type":"message","id":"0a00000d","parentId":"0a00000c","timestamp":ts(11),"message":{"role":"bashExecution","command":"ls","output":"a.txt","exitCode":0,"cancelled":False,"truncated":False,"timestamp":1767261611000}},
]
case("valid-every-entry-type",[],lines(*full),"One entry of every pi 0.73.1 type, each as pi writes it: nothing to report.")
br=[H(),U("a1b2c3d4",None),A("b2c3d4e5","a1b2c3d4"),U("c3d4e5f6","b2c3d4e5","Option one",n=3),A("d4e5f6a7","c3d4e5f6",n=4),U("e5f6a7b8","b2c3d4e5","Option two",n=5),A("f6a7b8c9","e5f6a7b8",n=6)]
case("valid-branches",[],lines(*br),"Two branches from the same assistant message: nothing to report.")
v87=[H(),U("a1b2c3d4",None),
 {"type":"message","id":"0b000001","parentId":"a1b2c3d4","timestamp":ts(2),"message":{"role":"system","content":"You are a careful reviewer.","timestamp":1767261602000}},
 A("b2c3d4e5","0b000001",n=3),
 {"type":"usage","id":"0b000002","parentId":"b2c3d4e5","timestamp":ts(4),"kind":"compaction","provider":"openai","model":"gpt-5-mini","usage":USAGE},
 {"type":"context_edit","id":"0b000003","parentId":"0b000002","timestamp":ts(5),"targetId":"b2c3d4e5","replacement":{"content":"Edited."}}]
case("valid-pi-0.87-entries",[],lines(*v87),"pi 0.87.1's `usage` and `context_edit` entries and `system` messages, validated for pi 0.87.1: nothing to report.",pi="0.87")
case("unknown-entry-type-pi-0.87-entries-for-0.73",["PS0201","PS0206"],lines(*v87),"The same pi 0.87.1 entries validated for pi 0.73.1, which does not know them: warnings.")
# PS00xx
case("invalid-json",["PS0001"],lines(H(),u,'{"type":"message","id":"c3d4e5f6","parentId":"a1b2c3d4",',A("d4e5f6a7","a1b2c3d4",n=3)),"A line cut in the middle, followed by more records: pi drops it.")
case("invalid-json-leading-bom-on-a-later-line",["PS0001"],lines(H(),u,"\ufeff"+d(A("b2c3d4e5","a1b2c3d4")),A("c3d4e5f6","a1b2c3d4",n=3)),"A byte order mark at the start of a later line makes it invalid JSON.")
case("torn-last-line",["PS0002"],lines(H(),u,a,'{"type":"message","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":"2026-01-01T10:00:0',end=""),"The last line stops in the middle of a record and the file has no final newline: an interrupted write.")
case("non-object-line",["PS0003"],lines(H(),u,"[1,2]",A("b2c3d4e5","a1b2c3d4")),"A JSON array between entries: pi keeps it as an entry without an id.")
case("non-object-last-line",["PS0003","PS0226"],lines(H(),u,a,"42"),"A number as the last line: pi has no leaf and its context is empty.")
case("non-object-line-in-v1",["PS0003","PS0108"],lines(H(version=None),{"type":"message","timestamp":ts(1),"message":u["message"]},'"text"',{"type":"message","timestamp":ts(2),"message":a["message"]}),"A string line in a version-1 file: pi's migration throws on it.")
case("null-line",["PS0004"],lines(H(),u,"null",A("b2c3d4e5","a1b2c3d4")),"A `null` line: pi 0.73.1 throws when it opens the file.")
case("null-line-pi-0.87",["PS0004"],lines(H(),u,"null",A("b2c3d4e5","a1b2c3d4")),"A `null` line: pi 0.87.1 skips it.",pi="0.87")
case("byte-order-mark",["PS0005"],b"\xef\xbb\xbf"+lines(H(),u,a),"A UTF-8 byte order mark before the header: pi 0.73.1 loads the file, `pi -c` does not see it.")
case("byte-order-mark-pi-0.87",["PS0001","PS0005","PS0102"],b"\xef\xbb\xbf"+lines(H(),u,a),"A UTF-8 byte order mark before the header: pi 0.87.1 cannot parse the header line and overwrites the file.",pi="0.87")
case("crlf-line-ending",["PS0006"],lines(H(),u,a).replace(b"\n",b"\r\n"),"Every line ends with CR LF: reported once, with the count.")
case("lone-carriage-return",["PS0007"],(d(H())+"\n"+d(u)+"\r"+d(a)+"\n").encode(),"Two records separated by a lone CR: one line for pi, not JSON, dropped.")
bad=lines(H(),u,a).replace("Hello".encode(),b"Hel\xfflo")
case("invalid-utf8",["PS0008"],bad,"A byte that is not UTF-8 inside a message: pi reads U+FFFD instead.")
case("blank-line",["PS0009"],lines(H(),u,"",a),"An empty line between two records: pi skips it.")
deep={"type":"custom","customType":"deep","data":None,"id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3)}
nest=None
for _ in range(130): nest=[nest]
deep["data"]=nest
case("deep-nesting",["PS0010"],lines(H(),u,a,deep),"A custom entry whose data nests 130 arrays: read by pi, checked by the schema only down to 120 levels.")
num='{"type":"custom","customType":"my-ext","data":{"big":123456789012345678901234567890,"huge":1E400,"fine":1.50},"id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":"%s"}'%ts(3)
case("number-not-exact",["PS0011"],lines(H(),u,a,num),"Numbers a double cannot hold as written: pi reads 1.2345678901234568e+29 and Infinity (written back as null); 1.50 is only spelled differently.")
dup='{"type":"custom","customType":"my-ext","data":{"k":1,"other":true,"k":2},"id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":"%s"}'%ts(3)
case("duplicate-key",["PS0012"],lines(H(),u,a,dup),"A key twice in one object: pi keeps only the last value.")
# PS01xx
case("no-header-empty-file",["PS0101"],b"","An empty file: pi overwrites it with a new session.")
case("no-header-empty-file-pi-0.87",["PS0101"],b"","An empty file: pi 0.87.1 writes a new session into it.",pi="0.87")
case("no-header-blank-file-pi-0.87",["PS0101"],b"\n  \n\t\n","A file of blank lines: pi 0.87.1 refuses to open it.",pi="0.87")
case("invalid-header-pi-0.87",["PS0102"],lines(H(id=42),u,a),"The header's id is a number: pi 0.87.1 refuses to open the file.",pi="0.87")
case("no-header-blank-file",["PS0101"],b"\n  \n\t\n","A file of blank lines: pi overwrites it with a new session.")
case("invalid-header",["PS0102"],lines(H(id=42),u,a),"The header's id is a number: pi overwrites the whole file with a new session.")
case("invalid-header-no-header-line",["PS0102"],lines(u,a),"The file starts with an entry instead of a header: pi overwrites it.")
case("invalid-header-null",["PS0102"],lines("null",H(),u,a),"The first value is `null`: pi 0.73.1 throws when it opens the file.")
case("header-field",["PS0103"],lines(H(cwd=None,timestamp=1767261600000),u,a),"The header has no cwd and a numeric timestamp.")
case("duplicate-header",["PS0104"],lines(H(),u,H(),a),"A second header line in the middle of the file, as pi's duplicate-header bug writes it.")
case("version-missing",["PS0105"],lines(H(version=None),u,a),"No version in a file whose entries have ids: pi reads it as version 1 and replaces the ids.")
case("version-not-integer-string",["PS0106"],lines(H(version="3"),u,a),"The version is the string \"3\": pi reads the file as version 3.")
case("version-not-integer-fraction",["PS0106"],lines(H(version=2.5),u,a),"The version is 2.5: pi migrates from version 2 and rewrites the file.")
case("version-future",["PS0107"],lines(H(version=4),u,a),"Version 4: pi reads the file as version 3 without a word.")
case("version-legacy-v2",["PS0108"],lines(H(version=2),u,a),"A version-2 file: pi migrates and rewrites it.")
v1=[H(version=None),{"type":"message","timestamp":ts(1),"message":u["message"]},{"type":"message","timestamp":ts(2),"message":a["message"]}]
case("version-legacy-v1",["PS0108"],lines(*v1),"A version-1 file (no version, no ids): pi migrates and rewrites it.")
case("header-too-long",["PS0109"],lines(H(cwd="/home/u/"+"very-long-directory-name/"*24),u,a),"A header line of more than 512 bytes: `pi -c` does not find the session.")
case("header-not-first",["PS0110"],b"\n"+lines(H(),u,a),"A blank first line: the header is on line 2 and `pi -c` does not recognise the file.")
title={"type":"title","v":1,"title":"Fix the cart","source":"auto","updatedAt":TS,"pad":""}
t=d(title); title["pad"]=" "*(255-len(t.encode()))
case("oh-my-pi-title",["PS0111"],lines(title,H(),u,a),"oh-my-pi's title line before the header: pi overwrites the file.")
omp=[{"type":"mode_change","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3),"mode":"plan","data":{"planFile":"/tmp/plan.md"}},
 {"type":"ttsr_injection","id":"d4e5f6a7","parentId":"c3d4e5f6","timestamp":ts(4),"injectedRules":["no-console"]},
 {"type":"ttsr_injection","id":"e5f6a7b8","parentId":"d4e5f6a7","timestamp":ts(5),"injectedRules":["prefer-const"]}]
case("oh-my-pi-dialect",["PS0112"],lines(H(),u,a,*omp),"oh-my-pi's entry types without its title slot: one diagnostic says the file is oh-my-pi's and counts them, instead of one unknown-entry-type per entry; pi keeps them and ignores them.")
# PS02xx
case("unknown-entry-type",["PS0201"],lines(H(),u,a,{"type":"bookmark","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3)}),"An entry type pi does not know: kept, ignored.")
case("entry-type-missing",["PS0202"],lines(H(),u,a,{"id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3)}),"An entry without a type.")
case("missing-field",["PS0203"],lines(H(),u,a,{"type":"model_change","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3),"provider":"openai"}),"A model_change without modelId.")
case("wrong-type",["PS0204"],lines(H(),u,a,{"type":"thinking_level_change","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3),"thinkingLevel":5}),"A thinking level that is a number.")
case("invalid-value",["PS0205"],lines(H(),u,a,{"type":"compaction","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3),"summary":"s","firstKeptEntryId":"a1b2c3d4","tokensBefore":-5}),"A compaction with a negative tokensBefore.")
case("unknown-role",["PS0206"],lines(H(),u,a,{"type":"message","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3),"message":{"role":"narrator","content":"Meanwhile…","timestamp":1767261603000}}),"A message role pi does not know.")
case("message-missing",["PS0207"],lines(H(),u,a,{"type":"message","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3),"message":None}),"A message entry whose message is null: pi throws when it builds the context.")
case("id-format",["PS0208"],lines(H(),U("entry-1",None),A("entry-2","entry-1")),"Entry ids that are not 8 lowercase hex characters: reported once, with the count.")
case("id-missing",["PS0209"],lines(H(),u,a,{"type":"custom","customType":"x","parentId":"b2c3d4e5","timestamp":ts(3)}),"An entry without an id.")
case("duplicate-id",["PS0210"],lines(H(),u,a,U("b2c3d4e5","a1b2c3d4","Again",n=3)),"Two entries with the same id.")
NR_H={"type":"session","version":3,"id":"019cc2a0-5f00-7000-8000-000000000010","timestamp":"2026-03-06T10:00:00.000Z","cwd":"/home/dana/src/webshop"}
NR_U={"type":"message","id":"a1000001","parentId":None,"timestamp":"2026-03-06T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"Why does the checkout test fail?"}],"timestamp":1772791201000}}
NR_A={"type":"message","id":"a1000002","parentId":"a1000001","timestamp":"2026-03-06T10:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Let me run it."},{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"npm test -- checkout"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1200,"output":80,"cacheRead":0,"cacheWrite":0,"totalTokens":1280,"cost":{"input":0.0036,"output":0.0012,"cacheRead":0,"cacheWrite":0,"total":0.0048}},"stopReason":"toolUse","timestamp":1772791203000}}
case("conversation-not-resumed",["PS0209","PS0211","PS0201","PS0226"],lines(NR_H,NR_U,NR_A,{"type":"leaf","targetId":"a1000002"}),"The last line is an entry without an id (a tool's `leaf` marker): pi takes it for its leaf, whose id is undefined, and resumes an empty conversation although the file holds two messages (seen in real files).")
case("duplicate-id-identical-copy",["PS0210"],lines(H(),u,a,a),"The same entry written twice, byte for byte: pi shows one copy, so nothing is hidden and the file stays pi-loadable.")
case("duplicate-id-after-second-header",["PS0104","PS0210","PS0215"],lines(H(),u,a,H(),U("a1b2c3d4",None,"Hi again",n=3),A("c3d4e5f6","a1b2c3d4",n=4)),"A second header mid-file and a first message that reuses an id, as a session restarted into the same file writes it: pi never shows the first user message (not in /tree, not in any context), so the file is not pi-loadable.")
case("parent-id-missing",["PS0211"],lines(H(),u,{k:v for k,v in a.items() if k!="parentId"}),"An entry without parentId.")
case("dangling-parent",["PS0212"],lines(H(),u,A("b2c3d4e5","ffffffff")),"A parentId that names no entry.")
case("parent-cycle",["PS0213"],lines(H(),u,A("b2c3d4e5","c3d4e5f6"),U("c3d4e5f6","b2c3d4e5",n=3)),"Two entries that are each other's parent: pi loops forever building the context.")
case("self-parent",["PS0214"],lines(H(),u,A("b2c3d4e5","b2c3d4e5")),"An entry that is its own parent: pi loops forever building the context.")
case("extra-root",["PS0215"],lines(H(),u,a,U("c3d4e5f6",None,"Start over",n=3)),"A second root, as editing the first message in /tree makes.")
case("first-kept-not-on-path",["PS0216"],lines(*br,{"type":"compaction","id":"0c000001","parentId":"f6a7b8c9","timestamp":ts(7),"summary":"s","firstKeptEntryId":"c3d4e5f6","tokensBefore":100}),"A compaction that keeps from an entry on another branch: the context keeps nothing from before it.")
case("first-kept-self-pi-0.87",[],lines(H(),u,a,{"type":"compaction","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3),"summary":"s","firstKeptEntryId":"c3d4e5f6","tokensBefore":100}),"A compaction whose firstKeptEntryId is its own id: how pi 0.87.1 writes one that keeps nothing (`firstKeptEntryId ?? id`), nothing to report under its rules.",pi="0.87")
case("label-target-missing",["PS0217"],lines(H(),u,a,{"type":"label","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3),"targetId":"deadbeef","label":"x"}),"A label for an entry that does not exist.")
case("branch-summary-from-id",["PS0218"],lines(H(),u,a,{"type":"branch_summary","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3),"fromId":"a1b2c3d4","summary":"s"}),"A branch summary whose fromId is not its parentId, which is what pi 0.73.1 writes there.")
case("branch-summary-from-leaf-pi-0.87",[],lines(*br,{"type":"branch_summary","id":"0c000002","parentId":"b2c3d4e5","timestamp":ts(7),"fromId":"f6a7b8c9","summary":"s"}),"A branch summary whose fromId is the leaf the branch was made from, as pi 0.87.1 writes it: nothing to report.",pi="0.87")
case("branch-summary-from-id-pi-0.87",["PS0218"],lines(H(),u,a,{"type":"branch_summary","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3),"fromId":"deadbeef","summary":"s"}),"A branch summary whose fromId is the id of no entry before it: pi 0.87.1 writes the leaf the branch was made from there.",pi="0.87")
case("orphan-tool-result",["PS0219"],lines(H(),u,a,TR("c3d4e5f6","b2c3d4e5","toolu_99",n=3)),"A tool result for a call no assistant message on its path made.")
case("timestamp-not-iso",["PS0220"],lines(H(timestamp="2026-01-01T10:00:00Z"),u,a),"A header timestamp without milliseconds.")
case("timestamp-not-iso-local-time",["PS0220"],lines(H(),{**u,"timestamp":"2026-01-01 10:00:01"},a),"An entry timestamp without a time zone: pi reads it in local time.")
case("timestamp-invalid",["PS0221"],lines(H(),u,{**a,"timestamp":"yesterday"}),"An entry timestamp that is not a date.")
case("usage-mismatch",["PS0222"],lines(H(),u,A("b2c3d4e5","a1b2c3d4",usage={**USAGE,"totalTokens":99})),"totalTokens that is not the sum of the token counts.")
case("usage-negative",["PS0223"],lines(H(),u,A("b2c3d4e5","a1b2c3d4",usage={**USAGE,"cost":{**USAGE["cost"],"output":-0.0006,"total":0.0024}})),"A negative cost.")
hook={"type":"message","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3),"message":{"role":"hookMessage","customType":"my-ext","content":"Note","display":True,"timestamp":1767261603000}}
case("hook-message-in-v3",["PS0224"],lines(H(),u,a,hook),"A hookMessage in a version-3 file: dropped before it reaches the model.")
case("legacy-field",["PS0225"],lines(H(),u,a,{"type":"compaction","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":ts(3),"summary":"s","firstKeptEntryId":"a1b2c3d4","firstKeptEntryIndex":1,"tokensBefore":100}),"A compaction that still carries the version-1 firstKeptEntryIndex.")
# PS03xx
case("file-too-large",["PS0301"],lines(H(),u,a),"A file longer than pi can read (the limit lowered to 600 UTF-16 units for the test).",maxTextUnits=600)
case("file-name-layout",["PS0302"],lines(H(),u,a),"A session file named session.jsonl in its project directory.",path="sessions/--home-u-proj--/session.jsonl")
case("directory-layout",["PS0303"],lines(H(),u,a),"A session file in a directory that is not its project's.",path="sessions/--home-u-other--/2026-01-01T10-00-00-000Z_"+SID+".jsonl")
case("valid-in-pi-layout",[],lines(H(),u,a),"A session at the place pi would put it: nothing to report.",path="sessions/--home-u-proj--/2026-01-01T10-00-00-000Z_"+SID+".jsonl")
case("schema-only",["PS0204"],lines(H(),u,a,{"type":"thinking_level_change","id":"not-hex","parentId":"b2c3d4e5","timestamp":"yesterday","thinkingLevel":5}),"With --schema-only, only the schema speaks: the wrong type, not the id form or the timestamp.",schemaOnly=True)
known={c[0] for c in cases}
for e in sorted(os.listdir(ROOT)) if os.path.isdir(ROOT) else []:
    if os.path.isdir(os.path.join(ROOT,e)) and e not in known:
        print("note: case not written by this script:", e)
os.makedirs(ROOT,exist_ok=True)
for name,codes,data,desc,meta in cases:
    p=os.path.join(ROOT,name); os.makedirs(p,exist_ok=True)
    open(os.path.join(p,"session.jsonl"),"wb").write(data)
    m={"description":desc,"codes":codes}; m.update(meta)
    open(os.path.join(p,"case.json"),"w").write(json.dumps(m,indent=2,ensure_ascii=False)+"\n")
print(len(cases))
