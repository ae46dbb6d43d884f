//! `read` of bytes that are not text: base64 with `encoding`, never lossy; a window never
//! ends inside a character; images with their type and size, and as an image content block
//! when asked.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{CallToolRequestParams, ResourceContents};
use serde_json::{Value, json};

use crate::support::{Client, Env, call, tool_outcome, try_call};

fn args(extra: Value) -> Value {
    let mut v = json!({"workspace_id": "w"});
    v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    v
}

/// One `read` answer: its result (checked to equal its text copy) and the window's bytes,
/// wherever `encoding` says they are.
async fn read(client: &Client, extra: Value) -> (Value, Vec<u8>) {
    let r = try_call(client, "read", args(extra)).await.unwrap();
    let blocks = r.content.clone();
    let w = tool_outcome(r).unwrap();
    let content = w["content"].as_str().unwrap();
    let bytes = match w["encoding"].as_str().unwrap() {
        "utf-8" => content.as_bytes().to_vec(),
        "base64" => STANDARD.decode(content).unwrap(),
        "resource" => {
            assert_eq!((content, blocks.len()), ("", 2), "{w}");
            let resource = blocks[1].as_resource().expect("an embedded resource block");
            let ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } =
                &resource.resource
            else {
                panic!("a blob: {resource:?}")
            };
            let offset = w.get("offset").map_or(0, |o| o.as_u64().unwrap());
            let name = format!("?offset={offset}&byte_count={}", w["byte_count"]);
            assert!(uri.starts_with("codespace:") && uri.ends_with(&name), "{uri}");
            assert_eq!(mime_type.as_deref(), Some("application/octet-stream"));
            STANDARD.decode(blob).unwrap()
        }
        other => panic!("unexpected encoding {other}"),
    };
    (w, bytes)
}

/// A 2x1 PNG: signature, IHDR (width 2, height 1), IEND (no image data: enough to sniff).
fn png() -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    b.extend_from_slice(&[0, 0, 0, 2, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0, 0, 0, 0]);
    b.extend_from_slice(b"\0\0\0\0IEND\xaeB`\x82");
    b
}

#[tokio::test]
async fn windows_that_are_not_text_come_as_base64_and_rebuild_the_file() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    let mut mixed = vec![0u8; 3000];
    mixed.extend_from_slice("héllo wörld ".repeat(300).as_bytes());
    mixed.extend_from_slice(&[0xff, 0xfe, b'\n']);
    std::fs::write(root.join("mixed.bin"), &mixed).unwrap();
    std::fs::write(root.join("text.txt"), "é".repeat(1000)).unwrap();
    let client = env.stdio().await;

    // Bytes that are not text cross once: as base64, the blob of a resource block after the
    // text copy (a session that takes structuredContent alone gets them in `content`).
    let (nul, bytes) = read(&client, json!({"path": "mixed.bin", "limit": 1000})).await;
    assert_eq!((nul["encoding"].as_str(), nul["content"].as_str()), (Some("resource"), Some("")));
    assert_eq!(bytes, vec![0u8; 1000]);
    assert!(nul.get("content_lossy").is_none());
    // Walking the windows by next_offset rebuilds every byte, whatever each window is.
    for limit in [777u64, 1000, 4096] {
        let (mut rebuilt, mut offset, mut seen) = (Vec::new(), 0u64, Vec::new());
        loop {
            let window = json!({"path": "mixed.bin", "offset": offset, "limit": limit});
            let (w, bytes) = read(&client, window).await;
            assert_eq!(w["byte_count"].as_u64().unwrap() as usize, bytes.len());
            rebuilt.extend(bytes);
            seen.push(w["encoding"].as_str().unwrap().to_owned());
            if w["truncated"] == false {
                break;
            }
            offset = w["next_offset"].as_u64().unwrap();
        }
        assert_eq!(rebuilt, mixed, "limit {limit}");
        // With windows smaller than the text run, some of them are text.
        assert_eq!(seen.contains(&"utf-8".to_owned()), limit < 4096, "{seen:?}");
        assert!(seen.contains(&"resource".to_owned()));
    }
    // A text window never ends inside a character: it stops before it, and the next
    // window starts there, so every window is text.
    let cut = call(&client, "read", args(json!({"path": "text.txt", "limit": 5}))).await.unwrap();
    assert_eq!((cut["encoding"].as_str(), cut["content"].as_str()), (Some("utf-8"), Some("éé")));
    assert_eq!((cut["byte_count"].as_u64(), cut["next_offset"].as_u64()), (Some(4), Some(4)));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_image_is_recognised_and_shown_as_an_image_block_when_asked() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    std::fs::write(root.join("dot.png"), png()).unwrap();
    std::fs::write(root.join("a.txt"), "not an image").unwrap();
    let client = env.stdio().await;

    let (plain, bytes) = read(&client, json!({"path": "dot.png"})).await;
    assert_eq!(plain["encoding"], "resource");
    assert_eq!(bytes, png());
    assert_eq!(plain["image"], json!({"mime_type": "image/png", "width": 2, "height": 1}));

    let Value::Object(map) = args(json!({"path": "dot.png", "image": true})) else { panic!() };
    let asked = CallToolRequestParams::new("read").with_arguments(map);
    let r = client.call_tool(asked).await.unwrap();
    let structured = r.structured_content.clone().unwrap();
    assert_eq!(structured["encoding"], "image");
    assert_eq!(structured["content"], "");
    assert_eq!(structured["image"]["mime_type"], "image/png");
    assert_eq!(structured["version"], plain["version"]);
    let text: Value = serde_json::from_str(&r.content[0].as_text().unwrap().text).unwrap();
    assert_eq!(text, structured, "the text copy stays first and equals structuredContent");
    let image = r.content[1].as_image().expect("an image content block");
    assert_eq!(image.mime_type, "image/png");
    assert_eq!(STANDARD.decode(&image.data).unwrap(), png());

    // Asked of a file that is not an image, or of part of one: answered as usual.
    let text = call(&client, "read", args(json!({"path": "a.txt", "image": true}))).await;
    assert_eq!(text.unwrap()["encoding"], "utf-8");
    let part = call(&client, "read", args(json!({"path": "dot.png", "image": true, "limit": 8})));
    let part = part.await.unwrap();
    assert_eq!(
        (part["encoding"].as_str(), part["truncated"].as_bool()),
        (Some("resource"), Some(true))
    );
    client.cancel().await.unwrap();
}
