//! Image-pipeline stories: product shots whose generation parameters are
//! checked against the tool's example input (small changes pass, a broken
//! payload is fixed by a reviewer), and a batch its user cancels.

use anyhow::Result;
use gatehouse_engine::run::Role;
use gatehouse_engine::{BlockingMode::*, DecisionInput, NewRun, Priority};
use serde_json::{json, Value};

use crate::demo::build::*;
use crate::demo::Sim;

/// The image tool's documented example input: what a well-formed call looks like.
fn example_input() -> Value {
    json!({
        "model": "sdxl-1.0",
        "prompt": "a product photo of a ceramic mug on a wooden table",
        "negative_prompt": "blurry, watermark",
        "input_image": "s3://acme-assets/examples/mug.png",
        "width": 1024,
        "height": 1024,
        "steps": 30,
        "guidance_scale": 7.0,
        "num_images": 4,
        "seed": 42
    })
}

/// Spring catalogue shots under a thresholds policy.
pub fn product_shots(sim: &mut Sim) -> Result<()> {
    let agent = "image-pipeline";
    let run = sim.start(NewRun {
        title: "Product shots: spring catalogue".into(),
        agent: agent.into(),
        user_id: Some("lena".into()),
        session_id: Some("catalogue-spring".into()),
        // Close to the tool's example and free of NSFW or copyright flags: no review needed.
        hitl_config: threshold_policy(None, &["nsfw", "copyright"], Some(3)),
        input: json!({"skus": ["MG-0031", "BK-2207", "BK-2210"], "style": "bright studio, soft shadows"}),
        ..NewRun::default()
    })?;
    sim.say(&run, Role::Human, "lena", "Three hero shots for the spring catalogue, bright studio look.")?;

    let mut mug = example_input();
    mug["prompt"] = json!("a product photo of the Nordic stoneware mug MG-0031 on a birch table, soft morning light");
    mug["input_image"] = json!("s3://acme-assets/catalogue/mg-0031/raw.png");
    let mug = payload_review("Generate the hero shot for MG-0031", mug, &["all required fields present"], &[], &[])
        .example(example_input())
        .mode(Async);
    sim.open(&run, mug)?;

    let bike = json!({
        "model": "sdxl-1.0",
        "prompt": "hero shot of the Bolt e-bike BK-2207 in a sunlit studio, three-quarter view",
        "negative_prompt": "blurry, watermark, text",
        "image_file": "s3://acme-assets/catalogue/bk-2207/raw.png",
        "width": 1920,
        "height": 1080,
        "steps": 150,
        "guidance_scale": 7.0,
        "num_images": 4,
        "seed": 42
    });
    let review = payload_review(
        "Generate the hero shot for BK-2207 (the payload fails validation)",
        bike.clone(),
        &["missing required field input_image", "unknown field image_file", "steps 150 exceeds the maximum of 50"],
        &["map image_file to input_image", "lower steps to 50"],
        &["model", "prompt", "input_image", "width", "height"],
    )
    .example(example_input())
    .mode(Sync)
    .priority(Priority::High);
    let review = sim.open(&run, review)?;
    let mut fixed = bike;
    if let Some(fields) = fixed.as_object_mut() {
        if let Some(image) = fields.remove("image_file") {
            fields.insert("input_image".into(), image);
        }
        fields.insert("steps".into(), json!(50));
    }
    sim.decide(&review, DecisionInput::edit(fixed), "alice")?;

    let reference = information_review(
        "The reference photo for BK-2210 may be copyrighted",
        0.91,
        &["reverse image search matches a stock photo (Getty 1198823)", "watermark traces in the lower corner"],
        &["copyright"],
        json!({"input_image": null, "prompt_only": true}),
    )
    .mode(Async);
    let reference = sim.open(&run, reference)?;
    let reason = "It is a licensed-elsewhere stock photo. Use our own studio shot from the March session instead.";
    sim.decide(&reference, DecisionInput::reject(reason), "carol")?;

    let lighting = information_review(
        "Lighting analysis of the studio shots",
        0.88,
        &["consistent colour temperature 5200K", "no clipped highlights"],
        &[],
        json!({"guidance_scale": 6.5}),
    )
    .mode(Advisory);
    sim.open(&run, lighting)?;

    let alt_text = response_review(
        "Review the generated alt text and captions (customer-facing)",
        "IMG 1: bike. IMG 2: A nice bike on a busy street with people. IMG 3: mug!!",
        "Image 1: The Bolt e-bike in a bright studio, three-quarter view. Image 3: Nordic stoneware mug on birch.",
        &["image 2 dropped: busy background", "punctuation normalised"],
    )
    .mode(Async)
    .human_only();
    let alt_text = sim.open(&run, alt_text)?;
    let note = "Background of image 2 is too busy for the catalogue; retry it on a plain studio backdrop.";
    sim.decide(&alt_text, retry(note), "bob")?;

    sim.say(&run, Role::Agent, agent, "Regenerated image 2 on a plain backdrop; all three shots uploaded.")?;
    let result = json!({"images": ["mg-0031/hero.png", "bk-2207/hero.png", "bk-2210/hero.png"], "gpu_seconds": 212});
    sim.engine.complete_run(&run.id, agent, Some(result))?;
    sim.report(&run)
}

/// A batch cancelled by its user: its open gates are withdrawn with it.
pub fn cancelled_batch(sim: &mut Sim) -> Result<()> {
    let agent = "image-pipeline";
    let run = sim.start(NewRun {
        title: "Localized banner variants (FR, IT, PL)".into(),
        agent: agent.into(),
        user_id: Some("lena".into()),
        session_id: Some("catalogue-spring".into()),
        hitl_config: human_policy(),
        input: json!({"locales": ["fr-FR", "it-IT", "pl-PL"], "variants_per_locale": 40}),
        ..NewRun::default()
    })?;
    let spend = approval(
        "spend_gpu_credit",
        "Spend about **$38** of GPU credit on 120 banner variants?",
        json!({"variants": 120, "estimated_usd": 38.4, "queue": "gpu-a10g-spot"}),
    )
    .mode(Sync)
    .priority(Priority::Normal);
    sim.open(&run, spend)?;
    let mut params = example_input();
    params["prompt"] = json!("spring sale banner, pastel palette, headline space on the left");
    params["width"] = json!(1600);
    params["height"] = json!(400);
    let params =
        payload_review("Check the banner parameters", params, &[], &[], &[]).example(example_input()).mode(Async);
    sim.open(&run, params)?;
    sim.engine.cancel_run(&run.id, "lena", Some("Campaign postponed by marketing; do not spend GPU credit."))?;
    sim.report(&run)
}
