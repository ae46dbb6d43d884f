//! Unit tests of `read`'s encoding and image sniffing.

use super::*;

#[test]
fn text_stays_text_and_anything_else_is_base64() {
    assert_eq!(encode(b"hi\n".to_vec(), false), ("hi\n".into(), Encoding::Utf8, 3));
    assert_eq!(encode(vec![0; 4], false), ("AAAAAA==".into(), Encoding::Base64, 4));
    assert_eq!(encode(b"a\xffb".to_vec(), false), ("Yf9i".into(), Encoding::Base64, 3));
    // NUL is valid UTF-8 but never text here.
    assert_eq!(encode(b"a\0".to_vec(), false).1, Encoding::Base64);
}

#[test]
fn a_character_cut_by_the_window_end_moves_to_the_next_window() {
    let cut = "aé".as_bytes()[..2].to_vec();
    assert_eq!(encode(cut.clone(), true), ("a".into(), Encoding::Utf8, 1));
    // At the end of the file there is no next window: the bytes are kept, as base64.
    assert_eq!(encode(cut, false), ("YcM=".into(), Encoding::Base64, 2));
    // A window starting inside a character is not text.
    assert_eq!(encode("é".as_bytes()[1..].to_vec(), true).1, Encoding::Base64);
}

fn size(info: Option<ImageInfo>) -> (String, Option<u32>, Option<u32>) {
    let info = info.expect("an image");
    (info.mime_type, info.width, info.height)
}

#[test]
fn image_headers_give_type_and_size() {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    png.extend_from_slice(&[0, 0, 1, 0, 0, 0, 0, 200]);
    assert_eq!(size(sniff(&png)), ("image/png".into(), Some(256), Some(200)));
    let gif = b"GIF89a\x40\x01\xf0\x00";
    assert_eq!(size(sniff(gif)), ("image/gif".into(), Some(320), Some(240)));
    // SOI, an APP0 segment of 4 bytes, then SOF0: precision, height 480, width 640.
    let jpeg = b"\xff\xd8\xff\xe0\x00\x04ab\xff\xc0\x00\x11\x08\x01\xe0\x02\x80";
    assert_eq!(size(sniff(jpeg)), ("image/jpeg".into(), Some(640), Some(480)));
    let mut webp = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0".to_vec();
    webp.extend_from_slice(&[99, 0, 0, 49, 0, 0]);
    assert_eq!(size(sniff(&webp)), ("image/webp".into(), Some(100), Some(50)));
    assert!(sniff(b"plain text").is_none());
    // A truncated header still names the type.
    assert_eq!(size(sniff(b"\xff\xd8\xff\xe0")), ("image/jpeg".into(), None, None));
}
