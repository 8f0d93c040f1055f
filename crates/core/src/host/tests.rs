//! The host over a real store: what it opens with and what it wires.

use std::sync::Arc;

use super::Host;
use crate::agent::{BUILTIN_SERVER, ToolHost};
use crate::conversations::{AssistantWriter, ConversationStore};
use crate::mcp::{DenyAll, McpRoot, ServerStatus};
use crate::paths::DataDir;
use crate::rag::KnowledgeBase;
use crate::roots::SharedFolders;
use crate::secrets::MemoryStore;
use crate::store::Store;

#[tokio::test]
async fn opening_counts_cut_off_answers_and_the_registry_gets_roots_and_the_builtin_server() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("data"));
    // An answer whose writer died mid-stream.
    {
        let conversations = ConversationStore::new(Store::open(&dir).unwrap());
        let c = conversations.create("x", None, None).unwrap();
        let user = conversations.add_user_message(c.id, None, "go", &[]).unwrap();
        let mut writer = AssistantWriter::start(&conversations, c.id, user, "p", "m").unwrap();
        writer.push_text(0, "cut off");
        writer.flush().unwrap();
    }
    let store = Store::open(&dir).unwrap();
    let shared = tmp.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    SharedFolders::new(store.clone()).add(&shared).unwrap();

    let (host, opened) = Host::open(dir.clone(), store.clone(), Arc::new(MemoryStore::new())).unwrap();
    assert_eq!(opened.interrupted, 1);
    assert!(opened.proxy_failed.is_none(), "{:?}", opened.proxy_failed);
    let (_, again) = Host::open(dir.clone(), store.clone(), Arc::new(MemoryStore::new())).unwrap();
    assert_eq!(again.interrupted, 0, "an answer is recovered once");

    host.configure(Vec::new(), Arc::new(DenyAll));
    host.share_roots().await.unwrap();
    let kb_folders = KnowledgeBase::open(&dir, store).unwrap().folders().unwrap();
    let expected: Vec<McpRoot> =
        kb_folders.iter().chain([&std::fs::canonicalize(&shared).unwrap()]).map(|f| McpRoot::from_path(f)).collect();
    assert_eq!(host.registry().roots(), expected);

    host.attach_builtin();
    host.registry().start_all().await;
    host.registry().wait_settled(std::time::Duration::from_secs(10)).await;
    assert_eq!(host.registry().status(BUILTIN_SERVER).unwrap(), ServerStatus::Ready);
    let names = |tools: Vec<crate::agent::HostedTool>| -> Vec<String> {
        let mut names: Vec<String> = tools.into_iter().map(|t| t.spec.name).collect();
        names.sort();
        names
    };
    let cancel = tokio_util::sync::CancellationToken::new;
    assert_eq!(names(host.tools(Vec::new(), false).unwrap().list_tools(cancel()).await), ["current_time"]);
    assert_eq!(
        names(host.tools(Vec::new(), true).unwrap().list_tools(cancel()).await),
        ["current_time", "knowledge_search"]
    );
    host.registry().shutdown().await;
}

/// The knowledge base's embedder, as tool search's: each text is embedded once per model.
#[tokio::test]
async fn tool_search_embeds_each_text_once() {
    use std::sync::Mutex;

    use tokio_util::sync::CancellationToken;

    use crate::agent::ToolEmbedder;
    use crate::rag::RagError;
    use crate::rag::embed::Embedder;

    #[derive(Default)]
    struct Counting(Mutex<Vec<String>>);
    #[async_trait::async_trait]
    impl Embedder for Counting {
        fn model_id(&self) -> &str {
            "counting"
        }
        async fn embed(&self, texts: &[String], _cancel: &CancellationToken) -> Result<Vec<Vec<f32>>, RagError> {
            self.0.lock().unwrap().extend(texts.iter().cloned());
            Ok(texts.iter().map(|t| vec![t.len() as f32]).collect())
        }
    }
    let inner = Arc::new(Counting::default());
    let embedder = super::embed::KbToolEmbedder { embedder: inner.clone(), english_only: false, cache: Arc::default() };
    let cancel = CancellationToken::new();
    let texts = |t: &[&str]| t.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let first = embedder.embed(&texts(&["a", "bb", "a"]), &cancel).await.unwrap();
    assert_eq!(first, [vec![1.0], vec![2.0], vec![1.0]]);
    let again = embedder.embed(&texts(&["bb", "ccc"]), &cancel).await.unwrap();
    assert_eq!(again, [vec![2.0], vec![3.0]]);
    assert_eq!(*inner.0.lock().unwrap(), ["a", "bb", "ccc"], "each text once");
}

/// A model that fails is left alone for a while: the next searches go by words at once.
#[tokio::test]
async fn a_failing_embedding_model_is_left_alone_for_a_while() {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio_util::sync::CancellationToken;

    use crate::agent::ToolEmbedder;
    use crate::rag::RagError;
    use crate::rag::embed::Embedder;

    #[derive(Default)]
    struct Failing(AtomicUsize);
    #[async_trait::async_trait]
    impl Embedder for Failing {
        fn model_id(&self) -> &str {
            "failing"
        }
        async fn embed(&self, _texts: &[String], _cancel: &CancellationToken) -> Result<Vec<Vec<f32>>, RagError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Err(RagError::Cancelled)
        }
    }
    let inner = Arc::new(Failing::default());
    let embedder = super::embed::KbToolEmbedder { embedder: inner.clone(), english_only: false, cache: Arc::default() };
    let cancel = CancellationToken::new();
    assert!(embedder.embed(&["a".to_owned()], &cancel).await.is_err());
    let rested = embedder.embed(&["b".to_owned()], &cancel).await.unwrap_err();
    assert!(rested.message.contains("failed a moment ago"), "{rested}");
    assert_eq!(inner.0.load(Ordering::SeqCst), 1, "not asked again while it rests");
}
